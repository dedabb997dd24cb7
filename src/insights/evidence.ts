import { z } from 'zod';
import { type DateRange, formatRange } from '../reports/range.ts';
import type { GapItem } from './gaps.ts';

/**
 * What a gap's "Draft it" is written from: the evidence of the latest report that listed the
 * gap, kept with the gap (src/store/gaps.ts), so that a click on any report, digest or week
 * reads it from the store; and the prompt the form prefills from it. Pure.
 */

/** Longest text kept of one wording, search term or comment. */
const TEXT_MAX = 300;

const Counted = z.object({ text: z.string(), count: z.number() });
export const GapEvidence = z.object({
  kind: z.enum(['question', 'search', 'page']),
  title: z.string(),
  period: z.object({ from: z.string(), to: z.string(), days: z.number(), timeZone: z.string() }),
  asked: z.number(),
  searched: z.number(),
  ctr: z.number().nullable(),
  page: z.object({ path: z.string(), thumbsDown: z.number(), thumbsUp: z.number() }).nullable(),
  wordings: z.array(Counted),
  searches: z.array(z.object({ text: z.string(), hits: z.number(), ctr: z.number() })),
  pages: z.array(z.object({ path: z.string(), count: z.number() })),
  comments: z.array(Counted.extend({ path: z.string() })),
  distinct: z.object({
    wordings: z.number(),
    searches: z.number(),
    comments: z.number(),
    pages: z.number(),
  }),
});
export type GapEvidence = z.infer<typeof GapEvidence>;

/** A gap's counts when it was drafted: "did it work?" compares later reports with them. */
export const GapBefore = z.object({
  asked: z.number(),
  searched: z.number(),
  from: z.string(),
  to: z.string(),
  days: z.number(),
});
export type GapBefore = z.infer<typeof GapBefore>;

const cut = (s: string, max = TEXT_MAX) =>
  s.length <= max ? s : `${s.slice(0, max - 1).replace(/[\uD800-\uDBFF]$/, '')}…`;
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

export function evidenceOf(item: GapItem, range: DateRange): GapEvidence {
  return {
    kind: item.kind,
    title: cut(oneLine(item.title)),
    period: { from: range.from, to: range.to, days: range.days, timeZone: range.timeZone },
    asked: item.asked,
    searched: item.searched,
    ctr: item.ctr,
    page: item.page && {
      path: cut(item.page.path),
      thumbsDown: item.page.thumbsDown,
      thumbsUp: item.page.thumbsUp,
    },
    wordings: item.wordings.map((w) => ({ text: cut(oneLine(w.text)), count: w.count })),
    searches: item.searches.map((s) => ({ text: cut(oneLine(s.text)), hits: s.hits, ctr: s.ctr })),
    pages: item.pages.map((p) => ({ path: cut(p.path), count: p.count })),
    comments: item.comments.map((c) => ({
      path: cut(c.path),
      text: cut(oneLine(c.text)),
      count: c.count,
    })),
    distinct: item.distinct,
  };
}

export function beforeOf(e: GapEvidence): GapBefore {
  return {
    asked: e.asked,
    searched: e.searched,
    from: e.period.from,
    to: e.period.to,
    days: e.period.days,
  };
}

/** Parses stored JSON; undefined (never a throw) for anything else. */
export function readStored<S extends z.ZodType>(
  schema: S,
  json: string | null,
): z.infer<S> | undefined {
  if (!json) return undefined;
  try {
    const r = schema.safeParse(JSON.parse(json));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

/** Slack's plain-text input holds at most 3,000 characters: the prompt fits in it. */
export const PROMPT_MAX = 3_000;

const n = (v: number) => v.toLocaleString('en-US');
const times = (v: number) => (v === 1 ? 'once' : `${n(v)} times`);
const pct = (f: number) => `${Math.round(f * 1000) / 10}%`;

const INSTRUCTIONS = {
  findFirst:
    '1. Look for an existing page that covers this first. If there is one, improve it and make it easy to find (its title, headings and the words readers used above) and link it from the pages readers were on; write a new page only if none covers it.',
  findable:
    '1. A search nobody clicks often means the page exists but is hard to find: look for it first. If it exists, make it findable (title, headings, the words readers searched) and link it where readers look; write a new page only if none covers it.',
  page: '1. Read the page and the comments, then fix what is wrong or missing on it; if another page already covers what readers wanted, link it from this one.',
  facts:
    '2. Do not invent product facts (settings, limits, endpoints, defaults, behaviour). Where the docs and the code do not say, write a clearly marked "TODO (needs a human): …" instead of guessing.',
  pr: "3. In the pull request, say which of the readers' wordings or comments the change answers, and list every TODO left for a human.",
};

/**
 * The prompt the Draft it form prefills: what readers did (wordings, counts, period, pages,
 * searches, comments) and how to go about it. Within PROMPT_MAX: the longest lists lose
 * their last lines first, each cut said ("and 3 more").
 */
export function draftPrompt(e: GapEvidence): string {
  const lists = listsOf(e);
  for (;;) {
    const text = compose(e, lists);
    if (text.length <= PROMPT_MAX) return text;
    const longest = (Object.keys(lists) as (keyof Lists)[])
      .filter((k) => lists[k].length > 1)
      .sort((a, b) => lists[b].join('').length - lists[a].join('').length)[0];
    if (!longest) return cut(text, PROMPT_MAX);
    lists[longest] = lists[longest].slice(0, -1);
  }
}

/** What readers did, one line each (plain text): the evidence part of the prompt. */
export function evidenceLines(e: GapEvidence): string[] {
  return didLines(e, listsOf(e));
}

type Lists = Record<'wordings' | 'searches' | 'pages' | 'comments', string[]>;

function listsOf(e: GapEvidence): Lists {
  return {
    wordings: e.wordings.map((w) => `  - "${w.text}" (${times(w.count)})`),
    searches: e.searches.map(
      (s) => `  - "${s.text}" (${times(s.hits)}, ${s.ctr > 0 ? `CTR ${pct(s.ctr)}` : 'no clicks'})`,
    ),
    pages: e.pages.map((p) => `  - ${p.path} (${times(p.count)})`),
    comments: e.comments.map(
      (c) => `  - on ${c.path}: "${c.text}"${c.count > 1 ? ` (${n(c.count)} readers)` : ''}`,
    ),
  };
}

function didLines(e: GapEvidence, lists: Lists): string[] {
  const total = e.distinct;
  const more = (k: keyof Lists, what: string) => {
    const left = total[k] - lists[k].length;
    return left > 0 ? [`  (and ${n(left)} more ${what})`] : [];
  };
  const did: string[] = [];
  if (e.page) {
    const votes = e.page.thumbsDown + e.page.thumbsUp;
    did.push(
      `- Gave the page ${e.page.path} ${times(e.page.thumbsDown)} a thumbs down (${pct(votes > 0 ? e.page.thumbsDown / votes : 0)} of votes).`,
    );
  }
  if (e.asked > 0) {
    const ways = total.wordings > 1 ? `, in ${n(total.wordings)} different wordings` : '';
    did.push(`- Asked the docs assistant ${times(e.asked)} and got no answer${ways}:`);
    did.push(...lists.wordings, ...more('wordings', 'wordings'));
  }
  if (e.searched > 0) {
    const clicks = e.ctr ? `clicked a result ${pct(e.ctr)} of the time` : 'clicked no result';
    did.push(`- Searched the docs ${times(e.searched)} and ${clicks}:`);
    did.push(...lists.searches, ...more('searches', 'search terms'));
  }
  if (lists.pages.length > 0) {
    did.push('- Pages they were on when they asked:');
    did.push(...lists.pages, ...more('pages', 'pages'));
  }
  if (lists.comments.length > 0) {
    did.push('- Their comments with a thumbs down:');
    did.push(...lists.comments, ...more('comments', 'comments'));
  }
  return did;
}

function compose(e: GapEvidence, lists: Lists): string {
  const period = formatRange({ ...e.period });
  const head =
    e.kind === 'page' && e.page
      ? `Improve the docs page ${e.page.path}: readers disliked it between ${period} (${e.period.timeZone}).`
      : `Close a gap in the docs that readers ran into between ${period} (${e.period.timeZone}): "${e.title}".`;
  const first =
    e.kind === 'page'
      ? INSTRUCTIONS.page
      : e.kind === 'search'
        ? INSTRUCTIONS.findable
        : INSTRUCTIONS.findFirst;
  return [
    head,
    '',
    'What readers did:',
    ...didLines(e, lists),
    '',
    'How to go about it:',
    first,
    INSTRUCTIONS.facts,
    INSTRUCTIONS.pr,
  ].join('\n');
}
