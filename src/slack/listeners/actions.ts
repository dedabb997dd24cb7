import type {
  AllMiddlewareArgs,
  App,
  SlackActionMiddlewareArgs,
  SlackViewMiddlewareArgs,
} from '@slack/bolt';
import { z } from 'zod';
import { refusalText } from '../../access.ts';
import type { Inflight } from '../../inflight.ts';
import type { FollowUpForm } from '../../jobs/follow-up-form.ts';
import type { ButtonAnswer, ButtonClick } from '../../jobs/retry.ts';
import type { Logger } from '../../log.ts';
import type { WorkLanes } from '../../work-queue.ts';
import { refusalModal } from '../access-middleware.ts';
import { ACTIONS, FOLLOW_UP_INPUT, FOLLOW_UP_VIEW, followUpModal } from '../action-blocks.ts';
import { readJson } from '../json-value.ts';
import { payloadTeam } from '../workspace-claims.ts';

/** What the root message's buttons do, in the jobs feature's words. */
export interface ButtonDeps {
  retry: (click: ButtonClick) => Promise<ButtonAnswer>;
  stopWatching: (click: ButtonClick) => Promise<ButtonAnswer>;
  followUpForm: FollowUpForm;
}

/** The parts of a `block_actions` payload the buttons read. */
const BlockActions = z.object({
  type: z.literal('block_actions'),
  user: z.object({ id: z.string().min(1) }),
  channel: z.object({ id: z.string().min(1) }),
  trigger_id: z.string().min(1),
  actions: z
    .array(z.object({ action_id: z.string(), value: z.string().regex(/^\d+$/).optional() }))
    .length(1),
});

/** The parts of the follow-up form's `view_submission` the bot reads. */
const FormSubmission = z.object({
  type: z.literal('view_submission'),
  user: z.object({ id: z.string().min(1) }),
  view: z.object({
    id: z.string().min(1),
    private_metadata: z.string(),
    state: z.object({
      values: z.object({
        [FOLLOW_UP_INPUT.block]: z.object({
          [FOLLOW_UP_INPUT.action]: z.object({ value: z.string().nullish() }),
        }),
      }),
    }),
  }),
});
const FormMetadata = z.object({ threadId: z.number().int().positive() });

const STALE =
  'This button is out of date (the bot has changed since it was posted). Use `/agent` or reply in the thread instead.';
const BUSY = "I'm very busy right now and couldn't take that. Please click again in a minute.";
const FORM_FAILED =
  "I couldn't open the form (Slack said the click was too old). Please click the button again.";
const NOT_RECORDED = "I couldn't record your follow-up (a storage error). Please send it again.";

/**
 * The buttons on a job's root message and the follow-up form. Every click is acked at once;
 * Retry and Cancel watching run from the work queue and answer only the person who clicked.
 * Send follow-up opens its form right after the ack (a trigger id lasts 3 s, too short to
 * wait in a queue). A form submission is recorded before it is answered (the answer closes
 * the form, and an empty one keeps it open with an error), then sent from the work queue.
 * A payload that cannot be read, a stale button or an unknown thread gets a plain answer and
 * a log line, never a crash.
 */
export function registerActions(
  app: App,
  deps: { buttons: ButtonDeps; log: Logger; inflight: Inflight; work: WorkLanes },
): void {
  const log = deps.log.child({ component: 'actions' });
  const { buttons } = deps;

  async function onClick(args: SlackActionMiddlewareArgs & AllMiddlewareArgs): Promise<void> {
    await args.ack();
    const tell = async (text: ButtonAnswer) => {
      if (!text) return;
      try {
        await args.respond({ response_type: 'ephemeral', replace_original: false, text });
      } catch (err) {
        log.warn({ err }, 'action.answer_failed');
      }
    };
    const parsed = BlockActions.safeParse(args.body);
    const action = parsed.success ? parsed.data.actions[0] : undefined;
    if (!parsed.success || !action) {
      log.warn({ issues: parsed.error?.issues.slice(0, 3) }, 'action.malformed');
      return tell(STALE);
    }
    const { user, channel, trigger_id } = parsed.data;
    if (action.action_id === ACTIONS.viewPr) return; // a link: Slack opened it
    const run = { [ACTIONS.retry]: buttons.retry, [ACTIONS.unwatch]: buttons.stopWatching }[
      action.action_id
    ];
    const known = run !== undefined || action.action_id === ACTIONS.followUp;
    if (!known || action.value === undefined) {
      log.warn({ actionId: action.action_id, userId: user.id }, 'action.stale');
      return tell(STALE);
    }
    const ws = requestWorkspace(args);
    if (!ws) {
      log.warn({ actionId: action.action_id, userId: user.id }, 'action.malformed');
      return tell(STALE);
    }
    const click = { threadId: Number(action.value), channelId: channel.id, userId: user.id, ...ws };
    log.info({ actionId: action.action_id, ...click }, 'action.clicked');
    if (run) {
      // Retry creates a job again (a start); Cancel watching is an answer.
      const lane = action.action_id === ACTIONS.retry ? deps.work.starts : deps.work.answers;
      const queued = lane.offer(action.action_id, async () => tell(await run(click)));
      if (!queued) await tell(BUSY);
      return;
    }
    const opened = await buttons.followUpForm.open(click);
    if ('answer' in opened) return tell(opened.answer);
    try {
      await args.client.views.open({ trigger_id, view: followUpModal(opened.thread) });
    } catch (err) {
      log.warn({ err, ...click }, 'action.form_not_opened');
      await tell(FORM_FAILED);
    }
  }

  async function onSubmit(args: SlackViewMiddlewareArgs & AllMiddlewareArgs): Promise<void> {
    const fail = (error: string) =>
      args.ack({ response_action: 'errors', errors: { [FOLLOW_UP_INPUT.block]: error } });
    const parsed = FormSubmission.safeParse(args.body);
    const meta = parsed.success
      ? readJson(FormMetadata, parsed.data.view.private_metadata)
      : undefined;
    if (!parsed.success || !meta) {
      log.warn({ issues: parsed.error?.issues.slice(0, 3) }, 'form.malformed');
      return fail('This form is out of date. Close it and click Send follow-up again.');
    }
    const { view, user } = parsed.data;
    const ws = requestWorkspace(args);
    if (!ws) {
      log.warn({ userId: user.id }, 'form.malformed');
      return fail('This form is out of date. Close it and click Send follow-up again.');
    }
    const text = view.state.values[FOLLOW_UP_INPUT.block]?.[FOLLOW_UP_INPUT.action]?.value ?? '';
    const sub = { threadId: meta.threadId, viewId: view.id, userId: user.id, text, ...ws };
    const recorded = await buttons.followUpForm.record(sub).catch((err: unknown) => {
      log.error({ err, threadId: sub.threadId }, 'form.record_failed');
      return { error: NOT_RECORDED };
    });
    if ('refused' in recorded) {
      // Logged as the access middleware logs its refusals: one event for every surface.
      const { refused: reason, channelId } = recorded;
      log.info(
        { surface: 'view', userId: user.id, channelId, threadId: sub.threadId, reason, told: true },
        'access.refused',
      );
      const text = refusalText(reason, recorded.lists);
      return args.ack({ response_action: 'update', view: refusalModal(text) });
    }
    if ('error' in recorded) {
      log.info({ threadId: sub.threadId, userId: user.id, why: recorded.error }, 'form.refused');
      return fail(recorded.error);
    }
    await args.ack();
    const queued = deps.work.answers.offer('form.deliver', async () => {
      const outcome = await buttons.followUpForm.deliver(view.id);
      log.debug({ threadId: sub.threadId, viewId: view.id, outcome }, 'form.handled');
    });
    // Recorded before the ack: the recovery pass sends it.
    if (!queued) log.warn({ threadId: sub.threadId, viewId: view.id }, 'form.left_for_recovery');
  }

  /** The workspace the request was authorized for: the job it names must be of it. */
  function requestWorkspace(args: AllMiddlewareArgs & { body: unknown }) {
    const { enterpriseId, isEnterpriseInstall } = args.context;
    const teamId = payloadTeam(args.body) ?? args.context.teamId;
    if (!teamId) return undefined;
    return { teamId, enterpriseId, orgWide: isEnterpriseInstall === true };
  }

  app.action({ type: 'block_actions', action_id: /^job_/ }, (args) =>
    deps.inflight.track(onClick(args)),
  );
  app.view(FOLLOW_UP_VIEW, (args) => deps.inflight.track(onSubmit(args)));
}
