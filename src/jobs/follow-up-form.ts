import type { Access, AccessWorkspace, ListsOf } from '../access.ts';
import type { Logger } from '../log.ts';
import type { JobThread, Store } from '../store/types.ts';
import type { FollowUpOutcome } from './ports.ts';
import {
  type ButtonAnswer,
  type ButtonClick,
  clickedThread,
  ofWorkspace,
  type RequestWorkspace,
  UNKNOWN_JOB,
} from './retry.ts';
import type { JobService } from './service.ts';
import { docsWorkspaceOf } from './snapshot.ts';

/** A follow-up written in the "Send follow-up" form, as the chat side read it. */
export interface FormFollowUp extends RequestWorkspace {
  threadId: number;
  /** The form's view id: one follow-up per submission, however often Slack sends it. */
  viewId: string;
  userId: string;
  text: string;
}

/** Statuses whose job takes a follow-up: a finished job starts a new round with it. */
const TAKES_FOLLOW_UPS: ReadonlySet<JobThread['status']> = new Set([
  'active',
  'completed',
  'failed',
]);

/** Whether the root offers the "Send follow-up" button. */
export function takesFollowUps(t: Pick<JobThread, 'jobId' | 'status'>): boolean {
  return t.jobId !== null && TAKES_FOLLOW_UPS.has(t.status);
}

/** Why a submission was not recorded: a message for the form, or who may not use the job. */
export type FormRefusal =
  | { error: string }
  | { refused: 'user' | 'channel'; channelId: string; lists: ListsOf };

/** A form's follow-up is keyed by its view, as a reply is by its message. */
export const formKey = (viewId: string) => `view:${viewId}`;

/**
 * "Send follow-up": a form instead of a thread reply, on the same path. The submission is
 * recorded before Slack is answered (so it cannot be lost), once per view, then sent from
 * the work queue by the follow-up service (budget, refusals and uncertainty included); a
 * crash in between is picked up by the recovery pass like a recorded reply.
 */
export function createFollowUpForm(deps: {
  store: Pick<Store, 'getThread' | 'recordFollowUp' | 'findFollowUp'>;
  jobs: Pick<JobService, 'deliver'>;
  /** ALLOWED_USERS / ALLOWED_CHANNELS, applied to the stored thread's channel. */
  access: Pick<Access, 'check'>;
  /** Distributed mode: the lists of the job's workspace instead. */
  accessOf?: ((ws: AccessWorkspace) => Promise<Pick<Access, 'check'>>) | undefined;
  log: Logger;
  now?: () => number;
}) {
  const { store } = deps;
  const log = deps.log.child({ component: 'follow-up-form' });
  const now = deps.now ?? Date.now;

  /** Before the form opens: the thread the button is on, or what to tell the person. */
  async function open(
    click: ButtonClick,
  ): Promise<{ thread: JobThread } | { answer: ButtonAnswer }> {
    const thread = clickedThread(await store.getThread(click.threadId), click, log);
    if (!thread) {
      log.info({ threadId: click.threadId, userId: click.userId }, 'follow_up_form.unknown_thread');
      return { answer: UNKNOWN_JOB };
    }
    if (!takesFollowUps(thread)) {
      log.info({ threadId: thread.id, status: thread.status }, 'follow_up_form.stale');
      return {
        answer: 'This job cannot take a follow-up any more. Start a new one with `/agent`.',
      };
    }
    return { thread };
  }

  /**
   * Records a submission; an error (shown in the form, which stays open) when it cannot be.
   * A submission recorded before (Slack sent it again) is fine: it is sent once.
   * The form names its thread only by id (its metadata is the submitter's to forge, and an
   * old form outlives a change of the allowlists): who may send it, and where, is decided
   * on the stored thread's workspace and channel, never on anything the payload says.
   */
  async function record(s: FormFollowUp): Promise<FormRefusal | { ok: true }> {
    const text = s.text.trim();
    if (!text) return { error: 'Write what the agent should do next.' };
    const thread = await store.getThread(s.threadId);
    if (!thread) return { error: UNKNOWN_JOB };
    if (!ofWorkspace(thread, s)) {
      const ids = { threadId: thread.id, userId: s.userId, teamId: s.teamId };
      log.warn(
        { surface: 'view', reason: 'other_workspace', ...ids, claimedTeamId: thread.teamId },
        'workspace.refused',
      );
      return { error: UNKNOWN_JOB };
    }
    const access = deps.accessOf ? await deps.accessOf(docsWorkspaceOf(thread)) : deps.access;
    const verdict = access.check(s.userId, thread.channelId);
    if (!verdict.ok) {
      const lists = deps.accessOf ? 'workspace' : 'deployment';
      return { refused: verdict.reason, channelId: thread.channelId, lists };
    }
    if (!takesFollowUps(thread))
      return { error: 'This job cannot take a follow-up any more. Start a new one with /agent.' };
    const key = formKey(s.viewId);
    const f = await store.recordFollowUp(
      { threadId: thread.id, replyKey: key, replyTs: '', userId: s.userId, text },
      [],
      now(),
    );
    log.info({ threadId: thread.id, viewId: s.viewId, duplicate: !f }, 'follow_up_form.recorded');
    return { ok: true };
  }

  /** After the answer: sends what `record` kept, unless it was handled already. */
  async function deliver(viewId: string): Promise<FollowUpOutcome> {
    const f = await store.findFollowUp(formKey(viewId));
    if (f?.state !== 'received') return 'duplicate';
    const thread = await store.getThread(f.threadId);
    if (!thread) return 'ignored';
    return deps.jobs.deliver(thread, f);
  }

  return { open, record, deliver };
}

export type FollowUpForm = ReturnType<typeof createFollowUpForm>;
