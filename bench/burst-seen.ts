/**
 * What the senders of the burst benchmark's commands have seen, read from FakeSlack's
 * recordings: the first answer to each command, the first that told its sender it was
 * refused, and the root posts of their jobs.
 */
import type { FakeSlack } from '../test/fakes/slack.ts';

/** One command: who sent it, where its answers go, and when it was sent (this clock, ms). */
export interface Cmd {
  token: string;
  text: string;
  channel: string;
  user: string;
  responseId: string;
  sentAt: number;
}

const ok = (response: unknown) => (response as { ok?: unknown } | null)?.ok === true;
export const TOKEN = /burst[A-Z]\d{3}|status[A-Z]/;

/**
 * What each sender has seen so far, read from FakeSlack's recordings as they grow: the first
 * answer of any kind, the first that told them the command was refused, and root posts.
 */
export class Seen {
  readonly first = new Map<string, number>();
  /** Told that the command was refused (or that the bot is busy): no job will come. */
  readonly told = new Map<string, number>();
  /** Told that its job's root waits for the channel's turn: a job will come. */
  readonly queued = new Map<string, number>();
  readonly roots = new Map<string, number>();
  private readonly rootTs = new Map<string, string>();
  private readonly byResponse = new Map<string, string>();
  private readonly byUser = new Map<string, string>();
  private calls = 0;
  private responses = 0;

  private readonly slack: FakeSlack;

  constructor(slack: FakeSlack) {
    this.slack = slack;
  }

  expect(cmd: Cmd): void {
    this.byResponse.set(cmd.responseId, cmd.token);
    this.byUser.set(`${cmd.channel}/${cmd.user}`, cmd.token);
  }

  /** An ack with text (usage, "busy") is an answer, and a refusal. */
  ack(token: string, at: number): void {
    this.see(this.first, token, at);
    this.see(this.told, token, at);
  }

  update(): void {
    for (; this.responses < this.slack.responses.length; this.responses++) {
      const r = this.slack.responses[this.responses]!;
      const token = this.byResponse.get(r.id);
      if (token && r.status === 200) this.answered(token, r.at, r.body);
    }
    for (; this.calls < this.slack.calls.length; this.calls++) {
      const c = this.slack.calls[this.calls]!;
      if (c.status !== 200 || !ok(c.response)) continue;
      const { args } = c;
      if (c.method === 'chat.postEphemeral') {
        const token = this.byUser.get(`${args.channel}/${args.user}`);
        if (token) this.answered(token, c.at, args);
      } else if (c.method === 'chat.postMessage' && !args.thread_ts) {
        const token = TOKEN.exec(JSON.stringify(args))?.[0];
        if (!token) continue;
        this.see(this.first, token, c.at);
        this.see(this.roots, token, c.at);
        const ts = (c.response as { ts?: string }).ts;
        if (ts) this.rootTs.set(ts, token);
      } else if (c.method === 'chat.update') {
        const token = this.rootTs.get(String(args.ts));
        if (token && /budget/i.test(JSON.stringify(args))) this.see(this.told, token, c.at);
      }
    }
  }

  /**
   * A private answer: the first thing seen if nothing was; a refusal, unless it says the
   * job's root waits for its channel's turn (src/jobs/root-steps.ts, queuedText).
   */
  private answered(token: string, at: number, body: unknown): void {
    this.see(this.first, token, at);
    const queued = /will appear in (about|a few seconds)/.test(JSON.stringify(body ?? ''));
    this.see(queued ? this.queued : this.told, token, at);
  }

  private see(map: Map<string, number>, token: string, at: number): void {
    const was = map.get(token);
    if (was === undefined || at < was) map.set(token, at);
  }
}
