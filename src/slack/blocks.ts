import type { KnownBlock } from '@slack/types';
import { escapeAndTruncate, escapeMrkdwn, link, quote } from '../mrkdwn.ts';
import type { Announcement, JobThread, ThreadStatus } from '../store/types.ts';
import { type ButtonsView, prButtonFits, rootActions, unwatchedLine } from './action-blocks.ts';

/**
 * Pure Block Kit builders for the job thread. Every message has a plain-text `text`
 * fallback (notifications, screen readers) and stays within Block Kit's limits: 3,000
 * characters of section text, 10 context elements, 50 blocks.
 */

export interface Message {
  text: string;
  blocks: KnownBlock[];
}

/** Room for the quoted, escaped prompt inside a 3,000-character section, after the heading line. */
const PROMPT_MAX = 2_900;
/** The fallback text is shown in notifications; keep it short. */
const FALLBACK_PROMPT_MAX = 150;

const STATUS: Record<ThreadStatus, { emoji: string; label: string }> = {
  starting: { emoji: ':hourglass_flowing_sand:', label: 'Starting' },
  start_failed: { emoji: ':warning:', label: 'Could not start' },
  active: { emoji: ':gear:', label: 'Working' },
  completed: { emoji: ':white_check_mark:', label: 'Completed' },
  failed: { emoji: ':x:', label: 'Failed' },
  archived: { emoji: ':file_cabinet:', label: 'Archived' },
  lost: { emoji: ':grey_question:', label: 'Job not found' },
};

export type RootView = Pick<
  JobThread,
  'userId' | 'prompt' | 'status' | 'jobId' | 'model' | 'repository' | 'ref' | 'prLink' | 'error'
> &
  ButtonsView &
  Partial<Pick<JobThread, 'contextMessages' | 'origin'>>;

/** What the root says when earlier thread messages went to the agent with the prompt. */
export function contextNote(n: number): string {
  return `with ${n} earlier message${n === 1 ? '' : 's'} from this thread as context`;
}

export function rootMessage(t: RootView): Message {
  const s = STATUS[t.status];
  const blocks: KnownBlock[] = [
    {
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: `<@${t.userId}> asked the docs agent:\n${quote(escapeAndTruncate(t.prompt, PROMPT_MAX), PROMPT_MAX)}`,
      },
    },
  ];
  const facts = [`${s.emoji} *${s.label}*`];
  if (t.contextMessages) facts.push(`:speech_balloon: ${contextNote(t.contextMessages)}`);
  if (t.origin) facts.push(`:bulb: Drafted from ${link(t.origin.url, t.origin.label)}`);
  if (t.repository) facts.push(`:file_folder: ${repoLabel(t.repository, t.ref)}`);
  if (t.model) facts.push(`:robot_face: ${escapeMrkdwn(t.model)}`);
  if (t.jobId) facts.push(`Job \`${escapeMrkdwn(t.jobId)}\``);
  blocks.push({ type: 'context', elements: facts.map((text) => ({ type: 'mrkdwn', text })) });
  // The "View pull request" button shows a link that fits one; any other is linked here.
  if (t.prLink && !prButtonFits(t.prLink)) {
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: `:link: ${link(t.prLink, 'View the pull request')}` },
    });
  }
  if (t.status === 'start_failed' && t.error) {
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: escapeAndTruncate(t.error, 2_900) },
    });
  } else if (t.status === 'active' && t.unwatchedBy) {
    blocks.push(unwatchedLine(t.unwatchedBy));
  } else if (t.status === 'active' || t.status === 'starting') {
    blocks.push({
      type: 'context',
      elements: [
        { type: 'mrkdwn', text: 'Reply in this thread to send the agent more instructions.' },
      ],
    });
  }
  const actions = rootActions(t);
  if (actions) blocks.push(actions);
  const text = `${s.label}: docs agent job for <@${t.userId}>: ${escapeAndTruncate(t.prompt, FALLBACK_PROMPT_MAX)}`;
  return { text, blocks };
}

function repoLabel(repository: string, ref: string | null): string {
  const name = repository.replace(/^https?:\/\/(www\.)?github\.com\//, '').replace(/\.git$/, '');
  const label = ref ? `${name}@${ref}` : name;
  return /^https?:\/\//.test(repository) ? link(repository, label) : escapeMrkdwn(label);
}

export function announcementMessage(a: Announcement): Message {
  const text = announcementText(a);
  return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] };
}

function announcementText(a: Announcement): string {
  switch (a.kind) {
    case 'completed':
      return a.prLink
        ? `:white_check_mark: The agent finished and opened a pull request: ${link(a.prLink, a.prLink)}`
        : ':white_check_mark: The agent finished. No files were changed, so there is no pull request.';
    case 'failed':
      return ':x: The agent job failed. Reply in this thread with more guidance to try again, or start a new job with `/agent`.';
    case 'archived':
      return ':file_cabinet: The job was archived.';
    case 'notice':
      return `:warning: ${escapeAndTruncate(a.detail ?? '', 2_900)}`;
    case 'lost':
      return ':grey_question: The job can no longer be found (the API answered 404), so I stopped watching it.';
  }
}

export const AGENT_USAGE = [
  '*Usage:* `/agent &lt;what the docs agent should do&gt;`',
  'Example: `/agent Add a quickstart for the Python SDK`',
  'I start a job and open a thread for it. Reply in the thread to send the agent follow-up instructions; I post status changes and the pull request link there.',
  '`/agent status` shows your jobs in progress and how much of the hourly agent budget is left.',
  '`/agent project` shows which docs project this channel uses (admins can change it with `/agent project &lt;projectId&gt;`).',
  "`/agent doctor` checks the bot's setup (Slack tokens and scopes, the Mintlify key and project, the database), only to you.",
  'You can also mention me in a channel with your request, or send it to me in a direct message.',
].join('\n');

/** Event type of the metadata on announcements; the thread check looks for it. */
export const ANNOUNCEMENT_EVENT = 'docs_agent_announcement';
/** Event type of the metadata on a job's root message; crash recovery looks for it. */
export const ROOT_EVENT = 'docs_agent_job';
