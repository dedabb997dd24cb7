import type { KnownBlock } from '@slack/types';
import { escapeAndTruncate, escapeMrkdwn, link } from '../mrkdwn.ts';
import { formatRange } from '../reports/range.ts';
import type { Counts, JobThread, ReportHeadline } from '../store/types.ts';
import { statusOf } from './blocks.ts';

/**
 * The App Home tab, built purely from what the publisher gathered: the person's recent jobs
 * (status, a link to the thread, the PR), the agent budget meter of each project those jobs
 * use (the budget is per project), and the last traffic
 * report's headline. Home views take at most 100 blocks; this stays far below (a few per job,
 * at most HOME_JOBS jobs) and cuts at the limit all the same.
 */

export const HOME_JOBS = 10;
const HOME_BLOCK_LIMIT = 100;
const PROMPT_MAX = 200;

export interface HomeJob {
  thread: Pick<
    JobThread,
    'channelId' | 'threadTs' | 'prompt' | 'status' | 'prLink' | 'createdAt' | 'jobId'
  > &
    Partial<Pick<JobThread, 'unwatchedBy'>>;
  /** The thread's permalink; undefined when Slack would not give one. */
  permalink: string | undefined;
}

/** One project's agent budget, as the meter shows it. */
export interface ProjectBudget {
  projectId: string;
  limit: number;
  remaining: number;
  nextSlotAt: number | null;
}

export interface HomeData {
  jobs: HomeJob[];
  /** The projects of the person's jobs (the configured one when they have none). */
  budgets: ProjectBudget[];
  report: ReportHeadline | undefined;
  now: number;
  /** Distributed mode: the workspace's docs project and settings (./connect-blocks.ts). */
  workspace?: KnownBlock[] | undefined;
}

export interface HomeView {
  type: 'home';
  blocks: KnownBlock[];
}

const mrkdwn = (text: string) => ({ type: 'mrkdwn' as const, text });
const header = (text: string): KnownBlock => ({
  type: 'header',
  text: { type: 'plain_text', text },
});
const section = (text: string): KnownBlock => ({ type: 'section', text: mrkdwn(text) });

/** `<!date^…>` with a plain fallback for clients that cannot format it. */
function slackDate(ms: number, format: string): string {
  const sec = Math.floor(ms / 1000);
  const fallback = `${new Date(sec * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  return `<!date^${sec}^${format}|${fallback}>`;
}

export function homeView(d: HomeData): HomeView {
  const blocks: KnownBlock[] = [
    header('Docs Agent'),
    ...budgetBlocks(d.budgets),
    { type: 'divider' },
    header('Your recent jobs'),
    ...jobBlocks(d.jobs),
    { type: 'divider' },
    header('Docs traffic'),
    ...reportBlocks(d.report),
    ...(d.workspace ?? []),
    {
      type: 'context',
      elements: [mrkdwn(`Updated ${slackDate(d.now, '{date_short_pretty} at {time}')}`)],
    },
  ];
  return { type: 'home', blocks: blocks.slice(0, HOME_BLOCK_LIMIT) };
}

/**
 * Per project, a ten-step meter of the uses left, then when the next slot opens if none is.
 * One section: a person's jobs span at most HOME_JOBS projects, far below 3,000 characters.
 */
export function budgetBlocks(budgets: ProjectBudget[]): KnownBlock[] {
  return [section(budgets.map(budgetLine).join('\n'))];
}

function budgetLine(b: ProjectBudget): string {
  const steps = 10;
  // Rounded down (one use gone shows), and never empty while a use is left.
  const share = b.limit > 0 ? Math.floor((b.remaining / b.limit) * steps) : 0;
  const filled = b.remaining > 0 ? Math.max(1, share) : 0;
  const meter = `${'▰'.repeat(filled)}${'▱'.repeat(steps - filled)}`;
  const label = `*Agent budget of \`${escapeMrkdwn(b.projectId)}\`:*`;
  return b.nextSlotAt === null
    ? `${label} ${meter} ${b.remaining} of ${b.limit} uses left in the last hour (jobs and follow-ups)`
    : `${label} ${meter} all ${b.limit} uses of the last hour are spent; the next one opens ${slackDate(b.nextSlotAt, 'at {time}')}`;
}

function jobBlocks(jobs: HomeJob[]): KnownBlock[] {
  if (jobs.length === 0)
    return [
      section(
        'You have no jobs yet. Start one with `/agent <what the docs agent should do>` in a channel.',
      ),
    ];
  return jobs.slice(0, HOME_JOBS).flatMap(({ thread: t, permalink }): KnownBlock[] => {
    const where = permalink ? link(permalink, 'Open the thread') : `<#${t.channelId}>`;
    const s = statusOf(t);
    const parts = [`*${s.emoji} ${s.label}* · <#${t.channelId}> · ${where}`];
    if (t.prLink) parts.push(`:link: ${link(t.prLink, 'View the pull request')}`);
    return [
      section(
        `${parts.join('\n')}\n>${escapeAndTruncate(t.prompt.replace(/\s+/g, ' '), PROMPT_MAX)}`,
      ),
      {
        type: 'context',
        elements: [
          mrkdwn(
            `Asked ${slackDate(t.createdAt, '{date_short_pretty} at {time}')}${t.jobId ? ` · job \`${escapeAndTruncate(t.jobId, 60)}\`` : ''}`,
          ),
        ],
      },
    ];
  });
}

function reportBlocks(r: ReportHeadline | undefined): KnownBlock[] {
  if (!r)
    return [section('No traffic report yet. Run `/visitors` in a channel for the last 7 days.')];
  const range = { from: r.from, to: r.to, days: 0, timeZone: r.timeZone };
  const period = `${formatRange(range)} (${escapeAndTruncate(r.timeZone, 40)})`;
  const figure = (label: string, k: keyof Counts) =>
    `*${r.totals[k].toLocaleString('en-US')}* ${label} ${changeText(r.totals[k], r.previousTotals[k])}`;
  const lines = [
    `*Last report:* ${period}`,
    `${figure('unique visitors', 'total')} · ${figure('human', 'human')} · ${figure('AI', 'ai')}`,
  ];
  const fine = `Built ${slackDate(r.generatedAt, '{date_short_pretty} at {time}')}${r.partial ? ' · pages only partly scanned' : ''}`;
  return [section(lines.join('\n')), { type: 'context', elements: [mrkdwn(fine)] }];
}

/** Change against the previous period: `(+12%)`, `(new)`, `(±0)`. */
function changeText(current: number, previous: number): string {
  if (previous === 0) return current === 0 ? '(±0)' : '(new)';
  const pct = Math.round(((current - previous) / previous) * 100);
  return pct === 0 ? '(±0%)' : `(${pct > 0 ? '+' : ''}${pct}%)`;
}
