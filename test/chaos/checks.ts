import type { ApiEmulator, EmulatedJob } from '../fakes/api-emulator.ts';
import type { LatencyProfile } from '../fakes/latency.ts';
import type { FakeSlack, StoredMessage } from '../fakes/slack.ts';
import { answerWaits } from './answer-wait.ts';
import { type CommandRecord, type ReplyRecord, SLACK_EVENT_RETRIES } from './slack-side.ts';

/**
 * The chaos world's invariants, read from the fakes' state: what people would see in Slack
 * and what the service received, never the bot's own account of it.
 */

/** Event type of announcement metadata (src/slack/blocks.ts), read back from the fake. */
const ANNOUNCEMENT_EVENT = 'docs_agent_announcement';
/** Announcement keys of the "your follow-up may not have gone through" notice start so. */
const REPLY_NOTICE_PREFIX = 'reply:';
export const DIGEST_CHANNEL = 'C0DIGEST';

export interface Violation {
  kind: 'duplicate' | 'lost' | 'other';
  what: string;
}

/** What the checks read of a world (ChaosWorld). */
export interface Observed {
  readonly engine: string;
  readonly seed: number;
  readonly slack: FakeSlack;
  readonly api: ApiEmulator;
  readonly commands: readonly CommandRecord[];
  readonly replies: readonly ReplyRecord[];
  readonly digest: boolean;
  readonly jobsMustFinish: boolean;
  readonly stats: Readonly<Record<'iterations' | 'kills' | 'slackFaults' | 'netFaults', number>>;
  readonly extra: Readonly<Record<string, number | string>>;
  readonly latency: LatencyProfile;
  readonly out: (line: string) => void;
  channels(): string[];
  roots(channel: string): StoredMessage[];
  canFinish(job: EmulatedJob): boolean;
}

/** The job id a root message shows ("Job `job_…`"), if any. */
/** The job a root shows, from its metadata (people see the id in the thread, not on the root). */
export function jobIdOf(root: StoredMessage): string | undefined {
  const id = root.metadata?.event_payload.job_id;
  return typeof id === 'string' ? id : undefined;
}

export function digestPosts(slack: FakeSlack): StoredMessage[] {
  return slack.history(DIGEST_CHANNEL).filter((m) => m.user === 'UBOT' && !m.thread_ts);
}

function announcements(slack: FakeSlack, channel: string, threadTs: string): StoredMessage[] {
  return slack
    .thread(channel, threadTs)
    .filter(
      (m) =>
        m.user === 'UBOT' && m.ts !== threadTs && m.metadata?.event_type === ANNOUNCEMENT_EVENT,
    );
}

/** The thread's latest status announcement (notices aside) is the job's final status. */
function finalAnnounced(
  slack: FakeSlack,
  channel: string,
  threadTs: string,
  job: EmulatedJob,
): boolean {
  const last = announcements(slack, channel, threadTs)
    .filter((m) => !String(m.metadata?.event_payload.key ?? '').startsWith(REPLY_NOTICE_PREFIX))
    .filter((m) => m.metadata?.event_payload.kind !== 'notice')
    .at(-1);
  if (!last || last.metadata?.event_payload.kind !== job.status) return false;
  return job.status !== 'completed' || !job.prLink || last.text.includes(job.prLink);
}

/** What is still outstanding, from the fakes; empty when everything is done and said. */
export function outstanding(w: Observed): string[] {
  const left: string[] = [];
  for (const r of w.replies)
    if (!r.acked && r.attempts <= SLACK_EVENT_RETRIES) left.push(`event for reply ${r.ts}`);
  if (w.jobsMustFinish)
    for (const job of w.api.jobs.values())
      if (job.status === 'active') left.push(`job ${job.id} active`);
  for (const ch of w.channels()) {
    for (const root of w.roots(ch)) {
      if (root.text.startsWith('Starting')) left.push(`root ${root.ts} still "Starting"`);
      const id = jobIdOf(root);
      const job = id ? w.api.jobs.get(id) : undefined;
      if (job && job.status !== 'active' && !finalAnnounced(w.slack, ch, root.ts, job))
        left.push(`job ${job.id} ${job.status} not announced`);
    }
  }
  if (w.digest && digestPosts(w.slack).length === 0) left.push('digest not posted');
  return left;
}

export type Counts = Record<
  'duplicates' | 'lost' | 'uncertainReported' | 'unanswered' | 'refused',
  number
>;

/** Collects violations and counts them as it goes. */
class Findings {
  readonly violations: Violation[] = [];
  readonly counts: Counts = {
    duplicates: 0,
    lost: 0,
    uncertainReported: 0,
    unanswered: 0,
    refused: 0,
  };
  dup(what: string): void {
    this.counts.duplicates++;
    this.violations.push({ kind: 'duplicate', what });
  }
  lost(what: string): void {
    this.counts.lost++;
    this.violations.push({ kind: 'lost', what });
  }
}

/** Every invariant, from the fakes' state. */
export function check(w: Observed): { violations: Violation[]; counts: Counts } {
  const f = new Findings();
  const created = w.api.createdJobs();
  checkCommands(w, created, f);
  checkJobs(w, created, f);
  checkFollowUps(w, created, f);
  if (w.digest) checkDigest(w, f);
  return { violations: f.violations, counts: f.counts };
}

/** Commands: one root each, one job at most, and the thread knows its job. */
function checkCommands(w: Observed, created: EmulatedJob[], f: Findings): void {
  const byPrompt = new Map<string, EmulatedJob[]>();
  for (const j of created)
    byPrompt.set(j.messages[0] ?? '', [...(byPrompt.get(j.messages[0] ?? '') ?? []), j]);
  for (const c of w.commands) {
    const roots = w.roots(c.channel).filter((m) => m.text.endsWith(`: ${c.prompt}`));
    const jobs = byPrompt.get(c.prompt) ?? [];
    if (roots.length > 1) f.dup(`/agent "${c.prompt}": ${roots.length} root messages`);
    if (jobs.length > 1)
      f.dup(`/agent "${c.prompt}": ${jobs.length} jobs created (a create was resent)`);
    const root = roots[0];
    if (!root) {
      if (jobs.length > 0)
        f.lost(`/agent "${c.prompt}": job ${jobs[0]?.id} created, but no thread in Slack`);
      else if (c.acked) f.counts.unanswered++;
      continue;
    }
    checkRoot(w, c, root, jobs[0], f);
  }
}

/** One command's root: settled, and showing the job it created (or saying it may have). */
function checkRoot(
  w: Observed,
  c: CommandRecord,
  root: StoredMessage,
  job: EmulatedJob | undefined,
  f: Findings,
): void {
  if (root.text.startsWith('Starting')) {
    const sent = job ? `job ${job.id} was created` : 'no create reached the service';
    f.lost(`/agent "${c.prompt}": root ${root.ts} still says "Starting" (${sent}; never settled)`);
    return;
  }
  const id = jobIdOf(root);
  if (id && !w.api.jobs.has(id))
    f.lost(`/agent "${c.prompt}": root ${root.ts} shows unknown job ${id}`);
  if (job && !id) {
    if (/may have started|cannot tell whether it started/.test(JSON.stringify(root.blocks ?? [])))
      f.counts.uncertainReported++;
    else
      f.lost(
        `/agent "${c.prompt}": job ${job.id} created, but its thread ${root.ts} does not know it (${root.text.slice(0, 60)})`,
      );
  }
  if (!job && !id) f.counts.refused++;
}

/** Jobs: every job created through the bot is in a thread; each final status announced once. */
function checkJobs(w: Observed, created: EmulatedJob[], f: Findings): void {
  const known = new Set(w.commands.map((c) => c.prompt));
  for (const j of created) {
    if (!known.has(j.messages[0] ?? ''))
      f.lost(`job ${j.id} was created for no /agent of this run`);
  }
  for (const ch of w.channels()) {
    for (const root of w.roots(ch)) {
      const keys = new Map<string, number>();
      for (const m of announcements(w.slack, ch, root.ts)) {
        const key = String(m.metadata?.event_payload.key);
        keys.set(key, (keys.get(key) ?? 0) + 1);
      }
      for (const [key, n] of keys)
        if (n > 1) f.dup(`thread ${root.ts}: announcement ${key} posted ${n} times`);
      checkThreadJob(w, ch, root, f);
    }
  }
}

/** A thread's job: its final status announced, and finished where every job must finish. */
function checkThreadJob(w: Observed, channel: string, root: StoredMessage, f: Findings): void {
  const id = jobIdOf(root);
  const job = id ? w.api.jobs.get(id) : undefined;
  if (job && job.status !== 'active' && !finalAnnounced(w.slack, channel, root.ts, job)) {
    const said = announcements(w.slack, channel, root.ts).map((m) => m.metadata?.event_payload.key);
    f.lost(
      `job ${job.id} is ${job.status}${job.prLink ? ` (${job.prLink})` : ''} but thread ${root.ts} last says ${said.at(-1) ?? 'nothing'}`,
    );
  }
  if (job?.status === 'active' && w.jobsMustFinish) {
    const why = w.canFinish(job)
      ? 'still active at the end'
      : 'a follow-up reached it, and the bot never polled it again: the new round is not watched';
    f.lost(`job ${job.id} in thread ${root.ts} never finished (${why})`);
  }
}

/** Follow-ups: received by the service exactly once, or the thread says it may not have been. */
function checkFollowUps(w: Observed, created: EmulatedJob[], f: Findings): void {
  const received = new Map<string, number>();
  for (const j of created)
    for (const m of j.messages.slice(1)) received.set(m, (received.get(m) ?? 0) + 1);
  const unexplained = new Map<string, ReplyRecord[]>();
  for (const r of w.replies) {
    const n = received.get(r.text) ?? 0;
    if (n > 1) f.dup(`follow-up ${r.ts} ("${r.text}") reached the service ${n} times`);
    const noticed = announcements(w.slack, r.channel, r.threadTs).some((m) => {
      const key = String(m.metadata?.event_payload.key ?? '');
      return key.startsWith(REPLY_NOTICE_PREFIX) && key.includes(r.ts);
    });
    if (noticed) f.counts.uncertainReported++;
    if (n >= 1 || noticed) continue;
    if (!r.acked) {
      f.counts.unanswered++; // Slack gave up delivering it: the bot never had it
      continue;
    }
    unexplained.set(r.threadTs, [...(unexplained.get(r.threadTs) ?? []), r]);
  }
  for (const [threadTs, list] of unexplained) checkRefusedReplies(w.slack, threadTs, list, f);
}

/**
 * A reply the bot refused for a plain reason (job still starting, budget spent, rate
 * limited) was answered "I did not send it" to its author; Slack does not tie that answer
 * to the reply, so it is matched per thread by count.
 */
function checkRefusedReplies(
  slack: FakeSlack,
  threadTs: string,
  list: ReplyRecord[],
  f: Findings,
): void {
  const told = slack.ephemerals.filter(
    (e) => e.thread_ts === threadTs && /did not send|not send your message/i.test(e.text ?? ''),
  ).length;
  f.counts.refused += Math.min(told, list.length);
  for (const r of list.slice(told)) {
    const maybe = slack.ephemerals.some(
      (e) =>
        e.thread_ts === threadTs && /could not confirm|may have been delivered/i.test(e.text ?? ''),
    );
    f.lost(
      `follow-up ${r.ts} ("${r.text}") in thread ${threadTs} never reached the service and the thread does not say so` +
        (maybe ? ' (only an ephemeral "may have been delivered" was sent)' : ''),
    );
  }
}

/** The digest: once per period. */
function checkDigest(w: Observed, f: Findings): void {
  const posts = digestPosts(w.slack);
  const texts = new Map<string, number>();
  for (const p of posts) texts.set(p.text, (texts.get(p.text) ?? 0) + 1);
  for (const [text, n] of texts)
    if (n > 1) f.dup(`digest "${text.slice(0, 60)}" posted ${n} times`);
  if (posts.length === 0) f.lost('the digest was never posted');
}

/** The run's one-line summary; the longest wait for a first answer goes to `out` first. */
export function summary(w: Observed, counts: Partial<Counts>): string {
  const faults =
    w.api.requests.filter((r) => r.fault !== undefined).length +
    w.stats.slackFaults +
    w.stats.netFaults;
  const waits = answerWaits(w.slack, w.commands, w.replies);
  if (waits.worst) w.out(`chaos: longest wait for a first answer: ${waits.worst}`);
  const extra = Object.entries({
    ...w.extra,
    unanswered: counts.unanswered ?? 0,
    latency: w.latency.name,
    answered: `${waits.answered}/${waits.sent}`,
    maxAnswerWaitMs: waits.maxMs,
  })
    .map(([k, val]) => `${k}=${val}`)
    .join(' ');
  return (
    `chaos: engine=${w.engine} seed=${w.seed} iterations=${w.stats.iterations} ` +
    `kills=${w.stats.kills} faults=${faults} jobs=${w.api.createdJobs().length} ` +
    `followUps=${w.replies.length} duplicates=${counts.duplicates ?? 0} lost=${counts.lost ?? 0} ` +
    `uncertainReported=${counts.uncertainReported ?? 0} ${extra}`
  ).trim();
}
