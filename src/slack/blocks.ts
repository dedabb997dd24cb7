import type { KnownBlock } from '@slack/types';
import { escapeAndTruncate, escapeMrkdwn, link, quote } from '../mrkdwn.ts';
import type { Announcement, JobThread, ThreadStatus } from '../store/types.ts';
import {
  ACTIONS,
  type ButtonsView,
  prButtonFits,
  rootActions,
  unwatchedNote,
} from './action-blocks.ts';

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
/** A job its requester stopped watching: running, as far as anyone knows, but not followed. */
const UNWATCHED = { emoji: ':no_bell:', label: 'Not watched' };

/** The status a root (and the App Home) shows: "Not watched" once watching was cancelled. */
export function statusOf(t: Pick<JobThread, 'status'> & { unwatchedBy?: string | null }): {
  emoji: string;
  label: string;
} {
  return t.status === 'active' && t.unwatchedBy ? UNWATCHED : STATUS[t.status];
}

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

/**
 * The job's root: the request, then one short context row (status and repo@ref, so that it
 * stays on one line on a phone), the buttons. The model and the job id are developer detail:
 * they go in the thread, on the outcome's reply (announcementMessage).
 */
export function rootMessage(t: RootView): Message {
  const s = statusOf(t);
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
  if (t.repository) facts.push(repoLabel(t.repository, t.ref));
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: facts.join(' · ') }] });
  const notes: string[] = [];
  if (t.contextMessages) notes.push(`:speech_balloon: Sent ${contextNote(t.contextMessages)}.`);
  if (t.origin) notes.push(`:bulb: Drafted from ${link(t.origin.url, t.origin.label)}.`);
  // The "View pull request" button shows a link that fits one; any other is linked here.
  if (t.prLink && !prButtonFits(t.prLink))
    notes.push(`:link: ${link(t.prLink, 'View the pull request')}`);
  if (t.status === 'active' && t.unwatchedBy) notes.push(unwatchedNote(t.unwatchedBy));
  else if (t.status === 'active' || t.status === 'starting')
    notes.push('Reply in this thread to send the agent more instructions.');
  if (notes.length)
    blocks.push({ type: 'context', elements: notes.map((text) => ({ type: 'mrkdwn', text })) });
  if (t.status === 'start_failed' && t.error) {
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: escapeAndTruncate(t.error, 2_900) },
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

/**
 * A pull request's short name: `owner/repo#N` for GitHub, `group/repo!N` for a GitLab merge
 * request; any other link shows as its host and path.
 */
export function prName(prLink: string): string {
  const gh = /^https?:\/\/(?:www\.)?github\.com\/([^/\s]+\/[^/\s]+)\/pull\/(\d+)/.exec(prLink);
  if (gh) return `${gh[1]}#${gh[2]}`;
  const gl = /^https?:\/\/[^/\s]+\/(.+?)\/-\/merge_requests\/(\d+)/.exec(prLink);
  if (gl) return `${gl[1]}!${gl[2]}`;
  return prLink.replace(/^https?:\/\//, '').replace(/\/$/, '');
}

/** Where the job's developer detail lives: the outcome's reply, in small print. */
export type AnnouncedJob = Pick<JobThread, 'jobId' | 'model'>;

/**
 * A reply in the job's thread. The outcome says what happened in words (the status itself is
 * the reaction and the root's status line: no second ✅ here); a completed job's names its
 * pull request as `owner/repo#N` with a button.
 */
export function announcementMessage(a: Announcement, job?: AnnouncedJob): Message {
  const text = announcementText(a);
  const blocks: KnownBlock[] = [{ type: 'section', text: { type: 'mrkdwn', text } }];
  if (a.kind === 'completed' && a.prLink && prButtonFits(a.prLink)) {
    blocks.push({
      type: 'actions',
      block_id: 'announcement_actions',
      elements: [
        {
          type: 'button',
          action_id: ACTIONS.viewPr,
          text: { type: 'plain_text', text: 'View pull request' },
          url: a.prLink,
          style: 'primary',
        },
      ],
    });
  }
  const detail = a.kind === 'notice' ? undefined : jobDetail(job);
  if (detail) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: detail }] });
  return { text, blocks };
}

function jobDetail(job: AnnouncedJob | undefined): string | undefined {
  const parts: string[] = [];
  if (job?.jobId) parts.push(`Job \`${escapeMrkdwn(job.jobId)}\``);
  if (job?.model) parts.push(`model ${escapeMrkdwn(job.model)}`);
  return parts.length ? parts.join(' · ') : undefined;
}

function announcementText(a: Announcement): string {
  switch (a.kind) {
    case 'completed':
      return a.prLink
        ? `The agent opened a pull request: ${link(a.prLink, prName(a.prLink))}`
        : 'The agent finished. No files were changed, so there is no pull request.';
    case 'failed':
      return 'The agent job failed. Reply in this thread with more guidance to try again, or start a new job with `/agent`.';
    case 'archived':
      return 'The job was archived.';
    case 'notice':
      return `:warning: ${escapeAndTruncate(a.detail ?? '', 2_900)}`;
    case 'lost':
      return 'The job can no longer be found (the API answered 404), so I stopped watching it.';
  }
}

const USAGE_HEAD = [
  '*Usage:* `/agent &lt;what the docs agent should do&gt;`',
  'Example: `/agent Add a quickstart for the Python SDK`',
  'I start a job and open a thread for it. Reply in the thread to send the agent follow-up instructions; I post status changes and the pull request link there.',
  '`/agent status` shows your jobs in progress and how much of the hourly agent budget is left.',
];
const USAGE_TAIL =
  'You can also mention me in a channel with your request, or send it to me in a direct message.';

export const AGENT_USAGE = [
  ...USAGE_HEAD,
  '`/agent project` shows which docs project this channel uses (admins can change it with `/agent project &lt;projectId&gt;`).',
  "`/agent doctor` checks the bot's setup (Slack tokens and scopes, the Mintlify key and project, the database), only to you.",
  USAGE_TAIL,
].join('\n');

/**
 * The same in the distributed mode, where the workspace's one docs project and key are set
 * from the App Home (Connect, Replace key) and `/agent project <id>` changes nothing.
 */
export const AGENT_USAGE_WORKSPACE = [
  ...USAGE_HEAD,
  "`/agent project` shows this workspace's docs project; a Docs Agent admin connects or replaces it from Docs Agent's App Home.",
  "`/agent doctor` checks this workspace's docs connection and key, only to you.",
  USAGE_TAIL,
].join('\n');

/** Event type of the metadata on announcements; the thread check looks for it. */
export const ANNOUNCEMENT_EVENT = 'docs_agent_announcement';
/** Event type of the metadata on a job's root message; crash recovery looks for it. */
export const ROOT_EVENT = 'docs_agent_job';
