/**
 * Views: modals opened with a trigger id (views.open) and each user's Home tab
 * (views.publish), with Slack's checks of both.
 */
import { randomBytes } from 'node:crypto';
import { blocksError, viewError } from './checks.ts';
import { type Caller, fail, type Handler, isObj, type Json, SLACK_IDS, str } from './wire.ts';

const APP_ID = SLACK_IDS.appId;

/** How long Slack accepts a trigger id after the interaction that issued it. */
const TRIGGER_TTL_MS = 3_000;

export class Views {
  /** Modals opened with views.open, and for whom (the trigger's user). */
  readonly views: { view: Json; user: string }[] = [];
  /** The Home tab each user sees, as views.publish last set it. */
  readonly homeViews = new Map<string, Json>();
  private readonly triggers = new Map<string, { user: string; issuedAt: number; used: boolean }>();
  private viewSeq = 0;

  /** The Web API methods answered here, by name. */
  handlers(): [string, Handler][] {
    return [
      ['views.open', (a, caller) => this.viewsOpen(a, caller)],
      ['views.publish', (a) => this.viewsPublish(a)],
    ];
  }

  /** A trigger id as Slack sends with an interaction by `user`: good for one views.open within 3 s. */
  issueTriggerId(user: string, issuedAt = Date.now()): string {
    const id = `${Math.floor(issuedAt / 1000)}.${randomBytes(4).toString('hex')}.${randomBytes(8).toString('hex')}`;
    this.triggers.set(id, { user, issuedAt, used: false });
    return id;
  }

  /**
   * Opens a modal for a trigger Slack handed out with an interaction: unknown ids are
   * `invalid_trigger_id`, ids older than 3 s `expired_trigger_id`, used ones
   * `exchanged_trigger_id`, as Slack answers.
   */
  /** The person a trigger id was issued for (an interaction of theirs), if it was. */
  triggerUser(triggerId: string): string | undefined {
    return this.triggers.get(triggerId)?.user;
  }

  private viewsOpen(a: Json, caller: Caller): Json {
    const triggerId = str(a.trigger_id);
    const trigger = triggerId ? this.triggers.get(triggerId) : undefined;
    if (!triggerId || !trigger) return fail('invalid_trigger_id');
    if (trigger.used) return fail('exchanged_trigger_id');
    if (Date.now() - trigger.issuedAt > TRIGGER_TTL_MS) return fail('expired_trigger_id');
    const err = viewError(a.view);
    if (err) return err;
    trigger.used = true;
    const view = {
      ...(a.view as Json),
      id: `V${String(++this.viewSeq).padStart(10, '0')}`,
      team_id: caller.team,
      app_id: APP_ID,
      bot_id: caller.botId,
      state: { values: {} },
      hash: randomBytes(6).toString('hex'),
    };
    this.views.push({ view, user: trigger.user });
    return { ok: true, view };
  }

  /** The Home tab: a `home` view of at most 100 blocks, per user. */
  private viewsPublish(a: Json): Json {
    const user = str(a.user_id);
    const view = a.view;
    if (!user) return fail('invalid_arguments');
    if (!isObj(view) || view.type !== 'home') return fail('invalid_arguments');
    if (!Array.isArray(view.blocks)) return fail('invalid_blocks_format');
    if (view.blocks.length > 100) return fail('invalid_blocks', { errors: ['too many blocks'] });
    // Within a view the 50-block cap of messages does not apply; the other limits do.
    const err = blocksError(view.blocks.slice(0, 50)) ?? blocksError(view.blocks.slice(50));
    if (err) return err;
    this.homeViews.set(user, view);
    return { ok: true, view: { id: `V${user}`, type: 'home', ...view } };
  }
}
