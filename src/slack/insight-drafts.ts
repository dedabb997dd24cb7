import type { ModalView } from '@slack/types';
import { z } from 'zod';
import type { DraftState } from '../insights/gap-book.ts';
import { escapeAndTruncate, link, truncate } from '../mrkdwn.ts';
import { prName } from './blocks.ts';
import { readJson } from './json-value.ts';

/**
 * "Draft it" on a content gap: the form, its metadata, and what the person is told. A gap's
 * click carries its id alone (gap-blocks.ts); the evidence is read from the gap's row. A
 * button of a report posted before gaps were kept carries its evidence in its value (a
 * seed): it still opens a form, written from the seed. Pure.
 */

/** The action id prefix of those older reports' Draft it buttons (`insight_draft_question_0`). */
export const DRAFT_ACTION = 'insight_draft';

export const DraftSeed = z.object({
  kind: z.enum(['question', 'search', 'page']),
  index: z.number().int().nonnegative(),
  count: z.number().int().nonnegative(),
  /** The example question, the search term, or the page path: verbatim. */
  example: z.string(),
  ctr: z.number().min(0).max(1).optional(),
  comments: z.array(z.string()).optional(),
});
export type DraftSeed = z.infer<typeof DraftSeed>;

export function decodeSeed(value: string): DraftSeed | undefined {
  return readJson(DraftSeed, value);
}

const times = (v: number) => (v === 1 ? 'once' : `${v.toLocaleString('en-US')} times`);
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/** The prompt of an older report's button, written from the evidence its value carries. */
export function seedPrompt(seed: DraftSeed): string {
  const example = oneLine(seed.example);
  if (seed.kind === 'question') {
    return `Readers asked ${times(seed.count)} about this and the docs assistant could not answer; example question: "${example}". Add a page or a section that answers it, and link it from where readers would look.`;
  }
  if (seed.kind === 'search') {
    const clicks =
      seed.ctr === undefined || seed.ctr === 0
        ? 'nobody clicked a result'
        : `only ${Math.round(seed.ctr * 1000) / 10}% clicked a result`;
    return `Readers searched the docs for "${example}" ${times(seed.count)} and ${clicks}. Add a page or a section that covers it, with the words readers use so search finds it.`;
  }
  const comments = (seed.comments ?? []).map((c) => `- "${oneLine(c)}"`);
  const said = comments.length > 0 ? ` Their latest comments:\n${comments.join('\n')}\n` : ' ';
  return `Readers gave the page ${example} ${times(seed.count)} a thumbs down.${said}Improve the page so it answers what they were looking for.`;
}

/** The draft form's callback id, and where its prompt input lives. */
export const DRAFT_VIEW = 'insight_draft_form';
export const DRAFT_INPUT = { block: 'draft', action: 'prompt' } as const;
/** Slack's plain-text input takes at most 3,000 characters. */
const INPUT_MAX = 3_000;

export const DraftMetadata = z.object({
  teamId: z.string().min(1),
  channelId: z.string().min(1),
  kind: DraftSeed.shape.kind,
  /** The insights message clicked: the job's root links back to it. */
  messageTs: z.string().min(1).optional(),
  /** The gap drafted (its row holds the state: one job per gap). */
  gapId: z.number().int().positive().optional(),
  /** An older report's button (no gap): with the message, names the insight (one job each). */
  actionId: z.string().min(1).optional(),
});
export type DraftMetadata = z.infer<typeof DraftMetadata>;

export interface DraftBudget {
  projectId: string;
  limit: number;
  remaining: number;
  nextSlotAt: number | null;
}

/** What the job's root calls the insight it was drafted from. */
export const ORIGIN_LABEL: Record<DraftSeed['kind'], string> = {
  question: 'an unanswered question in the insights report',
  search: 'a search readers did not follow, in the insights report',
  page: 'a page readers disliked, in the insights report',
};

/** What the job's root calls the gap it was drafted from. */
export const GAP_ORIGIN_LABEL: Record<DraftSeed['kind'], string> = {
  question: 'a content gap in the insights report',
  search: 'a content gap in the insights report',
  page: 'a page readers disliked, in the insights report',
};

const clock = (ms: number) => `${new Date(ms).toISOString().slice(11, 16)} UTC`;

/** What the form says of the agent budget of the channel's project. */
export function budgetLine(b: DraftBudget): string {
  const project = escapeAndTruncate(b.projectId, 100);
  if (b.remaining > 0)
    return `Agent budget: *${b.remaining}* of ${b.limit} uses left this hour for project \`${project}\`.`;
  const next = b.nextSlotAt === null ? '' : ` The next one frees at ${clock(b.nextSlotAt)}.`;
  return `:warning: Agent budget: none of ${b.limit} uses left this hour for project \`${project}\`.${next}`;
}

/** A form error (plain text) when the budget is spent: the person's text stays in the form. */
export function budgetSpentError(b: DraftBudget): string {
  const next = b.nextSlotAt === null ? '' : ` The next one frees at ${clock(b.nextSlotAt)};`;
  return `The agent budget of project ${b.projectId} is used up (${b.limit} jobs and messages an hour).${next} submit again then, your text is kept.`;
}

/**
 * The "Draft it" form: the prompt written from the evidence, editable, what the evidence is
 * from (`note`, mrkdwn), and the budget.
 */
export function draftModal(
  prompt: string,
  meta: DraftMetadata,
  budget: DraftBudget,
  note?: string,
): ModalView {
  const context = (text: string) => ({
    type: 'context' as const,
    elements: [{ type: 'mrkdwn' as const, text: truncate(text, 3_000) }],
  });
  return {
    type: 'modal',
    callback_id: DRAFT_VIEW,
    private_metadata: JSON.stringify(meta),
    title: { type: 'plain_text', text: 'Draft with the agent' },
    submit: { type: 'plain_text', text: 'Start the agent' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [
      {
        type: 'input',
        block_id: DRAFT_INPUT.block,
        label: { type: 'plain_text', text: 'What the docs agent should do' },
        element: {
          type: 'plain_text_input',
          action_id: DRAFT_INPUT.action,
          multiline: true,
          max_length: INPUT_MAX,
          initial_value: truncate(prompt, INPUT_MAX),
        },
      },
      ...(note ? [context(note)] : []),
      context(budgetLine(budget)),
    ],
  };
}

/** Where a drafted gap's job is, for its drafter's colleague who clicked Draft it (mrkdwn). */
export function draftedWhere(o: {
  state: DraftState;
  by: string | null;
  at: number | null;
  threadLink: string | undefined;
  prLink: string | null | undefined;
}): string {
  const who = o.by ? `<@${o.by}>` : 'Someone';
  const when = o.at === null ? '' : ` on ${new Date(o.at).toISOString().slice(0, 10)}`;
  const thread = o.threadLink ? link(o.threadLink, 'its thread') : 'its thread in the channel';
  if (o.state === 'starting')
    return `${who} started a job for this gap a moment ago; its thread appears where they clicked. Nothing new was started.`;
  if (o.state === 'done' && o.prLink)
    return `${who} drafted this gap${when}, and its job opened ${link(o.prLink, `pull request ${prName(o.prLink)}`)}: see ${thread}. Nothing new was started; reply there for more changes.`;
  return `${who} drafted this gap${when} and its job is still running: see ${thread}. Nothing new was started; reply there to add to it.`;
}

/** The same in a form's error (plain text, no links): the link goes to the person apart. */
export const DRAFTED_ERROR =
  'This gap was drafted already, and its job is running or opened a pull request: I sent you a link to its thread. Close this form.';
