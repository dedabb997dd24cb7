import type { FakeSlack, RecordedCall } from '../fakes/slack.ts';
import { USER } from '../helpers/harness.ts';

/** What the world knows of a command it sent (a subset of slack-side.ts's CommandRecord). */
export interface SentCommand {
  prompt: string;
  channel: string;
  /** When the world sent it (before the POST). */
  at: number;
  /** The id of the response_url handed out with it. */
  responseId: string;
  /** When the ack came back with text in it (usage, busy): the person saw that then. */
  ackTextAt?: number | undefined;
}

/** What the world knows of a thread reply it sent. */
export interface SentReply {
  channel: string;
  threadTs: string;
  ts: string;
  at: number;
}

export interface AnswerWaits {
  /** The longest wait, over everything that was answered at all (0 when nothing was). */
  maxMs: number;
  /** How many commands and replies got a first answer, of how many were sent. */
  answered: number;
  sent: number;
  /** The longest wait's command or reply and what the person saw first, for the log. */
  worst?: string | undefined;
}

const ok = (c: RecordedCall) => (c.response as { ok?: unknown } | null)?.ok === true;

/**
 * How long each person waited for the first thing they saw about what they sent, read from
 * the fake Slack's recordings (when a call took effect is when the person saw it), never
 * from the bot's logs:
 *
 * - a command: the ack's own text, a post to its response_url, its root message in the
 *   channel, or an ephemeral to its author in that channel (Slack does not tie an ephemeral
 *   to a command: each goes to the earliest command sent before it that had no sooner
 *   answer);
 * - a reply: a reaction on it (the receipt), a bot message in its thread whose metadata
 *   names it (the "may not have gone through" notice), or an ephemeral in its thread after
 *   it was sent.
 *
 * Something Slack gave up delivering, or that nobody ever answered, has no wait: it is
 * counted in `sent` but not in `answered` (the invariants judge whether that was right).
 */
export function answerWaits(
  slack: FakeSlack,
  commands: readonly SentCommand[],
  replies: readonly SentReply[],
): AnswerWaits {
  const waits: number[] = [];
  let worst: { ms: number; what: string } | undefined;
  const saw = (ms: number, what: string) => {
    waits.push(ms);
    if (!worst || ms > worst.ms) worst = { ms, what };
  };
  const posts = slack.callsTo('chat.postMessage').filter(ok);
  const ephemerals = slack.callsTo('chat.postEphemeral').filter(ok);
  const claimed = new Set<RecordedCall>();
  for (const c of [...commands].sort((a, b) => a.at - b.at)) {
    const seen: [number, string][] = [];
    if (c.ackTextAt !== undefined) seen.push([c.ackTextAt, 'ack text']);
    const response = slack.responses.find((r) => r.id === c.responseId && r.status < 300);
    if (response) seen.push([response.at, 'response_url']);
    const root = posts.find(
      (p) =>
        p.args.channel === c.channel &&
        p.args.thread_ts === undefined &&
        String(p.args.text ?? '').endsWith(`: ${c.prompt}`),
    );
    if (root) seen.push([root.at, 'root post']);
    // An ephemeral is this command's answer only if nothing else answered it sooner.
    const sooner = Math.min(...seen.map(([t]) => t));
    const eph = ephemerals.find(
      (e) =>
        !claimed.has(e) &&
        e.args.channel === c.channel &&
        e.args.user === USER &&
        e.args.thread_ts === undefined &&
        e.at >= c.at &&
        e.at < sooner,
    );
    if (eph) {
      claimed.add(eph);
      seen.push([eph.at, 'ephemeral']);
    }
    const first = seen.sort((a, b) => a[0] - b[0])[0];
    if (first) saw(first[0] - c.at, `/agent "${c.prompt}" in ${c.channel} (first: ${first[1]})`);
  }
  const reactions = slack.callsTo('reactions.add').filter(ok);
  for (const r of replies) {
    const seen: [number, string][] = [];
    const receipt = reactions.find(
      (x) => x.args.channel === r.channel && x.args.timestamp === r.ts,
    );
    if (receipt) seen.push([receipt.at, 'reaction']);
    const notice = posts.find(
      (p) =>
        p.args.thread_ts === r.threadTs &&
        p.at >= r.at &&
        JSON.stringify(p.args.metadata ?? '').includes(r.ts),
    );
    if (notice) seen.push([notice.at, 'notice']);
    const eph = ephemerals.find(
      (e) => e.args.channel === r.channel && e.args.thread_ts === r.threadTs && e.at >= r.at,
    );
    if (eph) seen.push([eph.at, 'ephemeral']);
    const first = seen.sort((a, b) => a[0] - b[0])[0];
    if (first) saw(first[0] - r.at, `reply ${r.ts} in ${r.channel} (first: ${first[1]})`);
  }
  return {
    maxMs: waits.length ? Math.max(...waits) : 0,
    answered: waits.length,
    sent: commands.length + replies.length,
    worst: worst && `${worst.ms} ms: ${worst.what}`,
  };
}
