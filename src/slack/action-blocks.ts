import type { ActionsBlock, Button, ModalView } from '@slack/types';
import { takesFollowUps } from '../jobs/follow-up-form.ts';
import { escapeAndTruncate, truncate } from '../mrkdwn.ts';
import type { JobThread } from '../store/types.ts';
import { UNINSTALLED_WATCHER } from '../store/workspace-records.ts';

/**
 * Pure Block Kit for the buttons on a job's root message, the follow-up form, and the
 * status reaction the root carries. Within Slack's limits: 25 elements an actions block,
 * 75 characters a button label, 3,000 a button URL, 24 a modal title or submit label.
 */

/** The buttons' action ids; the listener (src/slack/listeners/actions.ts) dispatches on them. */
export const ACTIONS = {
  viewPr: 'job_view_pr',
  retry: 'job_retry',
  followUp: 'job_follow_up',
  unwatch: 'job_unwatch',
} as const;
/** The follow-up form's callback id, and where its text input lives. */
export const FOLLOW_UP_VIEW = 'job_follow_up_form';
export const FOLLOW_UP_INPUT = { block: 'follow_up', action: 'text' } as const;

const URL_MAX = 3_000;
/** Slack's plain-text input takes at most 3,000 characters. */
const INPUT_MAX = 3_000;

export type ButtonsView = Pick<JobThread, 'status' | 'jobId' | 'prLink'> &
  Partial<Pick<JobThread, 'id' | 'startRetry' | 'unwatchedBy' | 'nextPollAt'>>;

/** Whether a PR link can be a link button (Slack takes http(s) URLs of up to 3,000 characters). */
export function prButtonFits(prLink: string): boolean {
  return /^https?:\/\//.test(prLink) && prLink.length <= URL_MAX;
}

/** The root's buttons for the thread as it is now; undefined when none apply. */
export function rootActions(t: ButtonsView): ActionsBlock | undefined {
  const elements: Button[] = [];
  if (t.prLink && prButtonFits(t.prLink))
    elements.push({
      type: 'button',
      action_id: ACTIONS.viewPr,
      text: { type: 'plain_text', text: 'View pull request' },
      url: t.prLink,
      style: 'primary',
    });
  // The rest act on the stored thread, named by its id: none on a root not recorded yet.
  const value = t.id === undefined ? undefined : String(t.id);
  if (value !== undefined && t.status === 'start_failed' && t.startRetry)
    elements.push({
      type: 'button',
      action_id: ACTIONS.retry,
      text: { type: 'plain_text', text: 'Retry' },
      value,
      ...(t.startRetry === 'confirm'
        ? {
            confirm: {
              title: { type: 'plain_text', text: 'Start it again?' },
              text: {
                type: 'plain_text',
                text: 'The first attempt may have started a job anyway. Check your pull requests before retrying.',
              },
              confirm: { type: 'plain_text', text: 'Retry' },
              deny: { type: 'plain_text', text: 'Cancel' },
            },
          }
        : {}),
    });
  if (value !== undefined && takesFollowUps(t))
    elements.push({
      type: 'button',
      action_id: ACTIONS.followUp,
      text: { type: 'plain_text', text: 'Send follow-up' },
      value,
    });
  if (value !== undefined && t.status === 'active' && !t.unwatchedBy)
    elements.push({
      type: 'button',
      action_id: ACTIONS.unwatch,
      text: { type: 'plain_text', text: 'Cancel watching' },
      value,
      confirm: {
        title: { type: 'plain_text', text: 'Stop watching?' },
        text: {
          type: 'plain_text',
          text: 'The job keeps running, but I will not post its outcome here. A follow-up resumes watching.',
        },
        confirm: { type: 'plain_text', text: 'Stop watching' },
        deny: { type: 'plain_text', text: 'Keep watching' },
      },
    });
  return elements.length ? { type: 'actions', block_id: 'job_actions', elements } : undefined;
}

/** The root's note for a job its requester stopped watching (its status says "Not watched"). */
export function unwatchedNote(userId: string): string {
  if (userId === UNINSTALLED_WATCHER)
    return 'Not watched: Docs Agent was uninstalled from this workspace. The job runs on at the service.';
  return `Cancelled by <@${userId}>. A follow-up in this thread resumes watching.`;
}

/**
 * The reaction that tells the job's state at a glance (names without colons). A job nobody
 * watches any more gets none of the progress ones: its state is not known.
 */
export function statusReaction(
  t: Pick<JobThread, 'status'> & { unwatchedBy?: string | null },
): string {
  if (t.status === 'active' && t.unwatchedBy) return 'no_bell';
  switch (t.status) {
    case 'starting':
    case 'active':
      return 'hourglass_flowing_sand';
    case 'completed':
      return 'white_check_mark';
    case 'failed':
    case 'start_failed':
      return 'x';
    case 'archived':
      return 'file_cabinet';
    case 'lost':
      return 'grey_question';
  }
}

/** The "Send follow-up" form; `private_metadata` names the thread. */
export function followUpModal(t: Pick<JobThread, 'id' | 'prompt'>): ModalView {
  return {
    type: 'modal',
    callback_id: FOLLOW_UP_VIEW,
    private_metadata: JSON.stringify({ threadId: t.id }),
    title: { type: 'plain_text', text: 'Send a follow-up' },
    submit: { type: 'plain_text', text: 'Send' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `The job: _${escapeAndTruncate(t.prompt.replace(/\s+/g, ' '), 280)}_`,
        },
      },
      {
        type: 'input',
        block_id: FOLLOW_UP_INPUT.block,
        label: { type: 'plain_text', text: 'What should the agent do next?' },
        element: {
          type: 'plain_text_input',
          action_id: FOLLOW_UP_INPUT.action,
          multiline: true,
          max_length: INPUT_MAX,
          placeholder: {
            type: 'plain_text',
            text: truncate('For example: also cover the async client', 150),
          },
        },
      },
    ],
  };
}
