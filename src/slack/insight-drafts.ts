import type { Button } from '@slack/types';
import { z } from 'zod';
import { truncate } from '../mrkdwn.ts';

/**
 * "Draft it" on an insight: the evidence travels in the button's value (no report kept in
 * memory, so a click works on any replica and after a restart), and becomes the prompt the
 * modal prefills. Pure.
 */

export const DRAFT_ACTION = 'insight_draft';
/** Slack's limit on a button's value. */
export const BUTTON_VALUE_MAX = 2_000;

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

/**
 * The seed as JSON within Slack's 2,000 characters: comments are dropped from the last and
 * the example cut until it fits (JSON escaping can lengthen text, so it is measured).
 */
export function encodeSeed(seed: DraftSeed): string {
  const s: DraftSeed = { ...seed, comments: seed.comments?.map((c) => truncate(c, 300)) };
  let json = JSON.stringify(s);
  while (json.length > BUTTON_VALUE_MAX && (s.comments?.length ?? 0) > 0) {
    s.comments = s.comments?.slice(0, -1);
    json = JSON.stringify(s);
  }
  let max = 600;
  while (json.length > BUTTON_VALUE_MAX && max > 10) {
    s.example = truncate(seed.example, max);
    max = Math.floor(max / 2);
    json = JSON.stringify(s);
  }
  return json;
}

export function decodeSeed(value: string): DraftSeed | undefined {
  try {
    const parsed = DraftSeed.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export function draftButton(seed: DraftSeed): Button {
  return {
    type: 'button',
    action_id: `${DRAFT_ACTION}_${seed.kind}_${seed.index}`,
    text: { type: 'plain_text', text: 'Draft it' },
    value: encodeSeed(seed),
  };
}

const times = (v: number) => (v === 1 ? 'once' : `${v.toLocaleString('en-US')} times`);
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/** The prompt the modal prefills, written from the evidence; the person edits it. */
export function draftPrompt(seed: DraftSeed): string {
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
