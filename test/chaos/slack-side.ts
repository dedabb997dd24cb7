import type { FakeSlack } from '../fakes/slack.ts';
import { CHANNEL, SECRETS, USER } from '../helpers/harness.ts';
import {
  formEncode,
  messageEvent,
  signSlackRequest,
  slashCommand,
} from '../helpers/slack-requests.ts';
import type { BotProcess } from './bot-process.ts';
import type { Prng } from './prng.ts';

/**
 * Slack's part in a chaos world, played faithfully: people type `/agent` and reply in
 * threads; a command is answered within 3 s or the person sees an error; an event that was
 * not acked is redelivered, up to three times, to whichever bot is up.
 */

/** Slack waits this long for an ack (commands and events) before it gives up. */
const SLACK_ACK_MS = 3_000;
/** Slack redelivers an event that was not acked, up to three times. */
export const SLACK_EVENT_RETRIES = 3;

export interface CommandRecord {
  prompt: string;
  channel: string;
  via: string;
  /** Did the bot answer Slack within 3 s? If not, Slack showed the person an error. */
  acked: boolean;
  at: number;
  /** The id of the response_url sent with it (the fake records posts to it by id). */
  responseId: string;
  /** When an ack with text (usage, busy) came back: the person saw that at once. */
  ackTextAt?: number | undefined;
}

export interface ReplyRecord {
  channel: string;
  threadTs: string;
  ts: string;
  text: string;
  body: Record<string, unknown>;
  /** Deliveries tried (Slack's first attempt and its retries). */
  attempts: number;
  acked: boolean;
  /** When the person sent it. */
  at: number;
}

/** What the people and Slack act on. */
interface People {
  slack: FakeSlack;
  rng: Prng;
  bots: ReadonlyMap<string, BotProcess>;
  /** How far ahead of the real clock the bots run now: requests are stamped with it. */
  clockOffsetMs: () => number;
}

export class SlackSide {
  readonly commands: CommandRecord[] = [];
  readonly replies: ReplyRecord[] = [];
  #seq = 0;

  readonly #o: People;

  constructor(o: People) {
    this.#o = o;
  }

  nextPrompt(): string {
    return `chaos ${this.#o.rng.seed} job ${++this.#seq}`;
  }

  /** `/agent <prompt>` as a person types it; to a given bot or one picked like a balancer. */
  async command(
    o: { prompt?: string; via?: string; channel?: string } = {},
  ): Promise<CommandRecord> {
    const prompt = o.prompt ?? this.nextPrompt();
    const channel = o.channel ?? CHANNEL;
    const bot = this.#pickBot(o.via);
    const responseUrl = this.#o.slack.responseUrl();
    const rec: CommandRecord = {
      prompt,
      channel,
      via: bot?.name ?? '-',
      acked: false,
      at: Date.now(),
      responseId: responseUrl.split('/').at(-1) ?? '',
    };
    this.commands.push(rec);
    if (!bot) return rec; // Slack: "dispatch_failed"
    const fields = slashCommand({
      text: prompt,
      response_url: responseUrl,
      channel_id: channel,
      user_id: USER,
    });
    const acked = await this.#post(bot, formEncode(fields));
    rec.acked = acked.ok;
    rec.ackTextAt = acked.textAt;
    return rec;
  }

  /** A person replies in a thread: the message lands in Slack, then Slack delivers the event. */
  async reply(threadTs: string, o: { channel?: string; via?: string } = {}): Promise<ReplyRecord> {
    const channel = o.channel ?? CHANNEL;
    const text = `chaos ${this.#o.rng.seed} follow-up ${++this.#seq}`;
    const at = Date.now();
    const { ts } = this.#o.slack.addUserMessage({ channel, user: USER, text, thread_ts: threadTs });
    const body = messageEvent({ text, channel, user: USER, ts, thread_ts: threadTs });
    const rec: ReplyRecord = { channel, threadTs, ts, text, body, attempts: 0, acked: false, at };
    this.replies.push(rec);
    await this.#deliver(rec, o.via);
    return rec;
  }

  /** Slack's retries of events that were not acked, sent to whichever bot is up. */
  async redeliver(): Promise<void> {
    for (const r of this.replies) {
      if (r.acked || r.attempts > SLACK_EVENT_RETRIES) continue;
      if (r.attempts === 0) r.attempts = 1; // the first try hit a dead bot
      await this.#deliver(r);
    }
  }

  async #deliver(rec: ReplyRecord, via?: string): Promise<void> {
    const bot = this.#pickBot(via);
    if (!bot) return; // nobody answers: counts as a failed attempt when Slack next tries
    rec.attempts++;
    const delivered = await this.#post(
      bot,
      JSON.stringify(rec.body),
      rec.attempts > 1 ? rec.attempts - 1 : undefined,
    );
    rec.acked = delivered.ok;
  }

  #pickBot(via?: string): BotProcess | undefined {
    if (via) {
      const b = this.#o.bots.get(via);
      return b?.alive ? b : undefined;
    }
    const live = [...this.#o.bots.values()].filter((b) => b.alive);
    return live.length ? this.#o.rng.pick(live) : undefined;
  }

  /**
   * A signed POST to a bot as Slack makes it, stamped with the bots' clock: whether it was
   * acked in time, and when an ack with text (which the person sees) came back.
   */
  async #post(
    bot: BotProcess,
    body: string,
    retryNum?: number,
  ): Promise<{ ok: boolean; textAt?: number }> {
    const ts = Math.floor((Date.now() + this.#o.clockOffsetMs()) / 1000);
    const headers: Record<string, string> = {
      'content-type': body.startsWith('{')
        ? 'application/json'
        : 'application/x-www-form-urlencoded',
      ...signSlackRequest(SECRETS.signingSecret, body, ts),
    };
    if (retryNum !== undefined) {
      headers['x-slack-retry-num'] = String(retryNum);
      headers['x-slack-retry-reason'] = 'http_error';
    }
    try {
      const res = await fetch(`${bot.url}/slack/events`, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(SLACK_ACK_MS),
      });
      const answer = await res.text();
      return { ok: res.ok, ...(res.ok && answer.includes('"text"') ? { textAt: Date.now() } : {}) };
    } catch {
      return { ok: false };
    }
  }
}
