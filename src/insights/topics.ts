import { drain, type Steps } from '../reports/turns.ts';
import { jaccard, tokens } from './normalise.ts';

/**
 * Grouping questions (or search terms) into topics.
 *
 * Rule: normalise each text to its word set (normalise.ts), then, taking the texts with the
 * most frequent word sets first, each one joins the first topic whose *leader* (the word set
 * that started it) shares at least 60% of their words with it (token-set Jaccard ≥ 0.6, e.g.
 * 3 of 5), or starts a new topic. Comparing with the leader, not with every member, keeps
 * topics from drifting through chains of small differences ("rotate API key" never reaches
 * "delete API key": they share 2 of 4 words, 0.5). A text with no words left (only stop
 * words or punctuation) is grouped by its folded text alone. Words are not translated: a
 * question in German lands in its own topic unless its stems match (`configurer` does).
 */

export const MERGE_THRESHOLD = 0.6;

export interface TopicInput {
  text: string;
  /** How many times it was asked or searched (1 for one question). */
  count?: number;
  /** When it was last asked (ISO), to pick the example. */
  at?: string | undefined;
}

export interface Topic {
  /** The leader's words, sorted: a stable key for buttons and caches. */
  key: string;
  words: string[];
  /** Sum of the members' counts. */
  count: number;
  /** The most asked member text verbatim, the latest among equals (unescaped: Slack escapes). */
  example: string;
  /** Distinct texts, most frequent first. */
  variants: { text: string; count: number }[];
  lastAt: string | undefined;
}

interface Variant {
  text: string;
  words: string[];
  count: number;
  at: string | undefined;
}

/** Topics, largest first (count, then key); see the rule above. */
export function groupTopics(inputs: readonly TopicInput[], threshold = MERGE_THRESHOLD): Topic[] {
  return drain(groupTopicSteps(inputs, threshold));
}

/** How long one step of the grouping may hold the event loop. */
const STEP_MS = 5;

/**
 * `groupTopics` in steps of a few milliseconds (src/reports/turns.ts): thousands of distinct
 * questions take well over a second to group, which must not hold an ack or an answer.
 * A text is compared only with the leaders that share a word with it (an index from word to
 * topic), in the order the topics were made: any other leader's Jaccard index is 0.
 */
export function* groupTopicSteps(
  inputs: readonly TopicInput[],
  threshold = MERGE_THRESHOLD,
): Steps<Topic[]> {
  const variants = yield* collectVariants(inputs);
  yield;
  const bySet = new Map<string, Variant[]>();
  for (const v of variants) {
    const k = v.words.length > 0 ? v.words.join(' ') : `\u0000${v.text.toLowerCase()}`;
    const members = bySet.get(k);
    if (members) members.push(v);
    else bySet.set(k, [v]);
  }
  // Word sets by total count, so the most asked form leads its topic.
  const sets = [...bySet.values()]
    .map((members) => ({ members, total: sum(members), key: members[0]!.words.join(' ') }))
    .sort((a, b) => b.total - a.total || (a.key < b.key ? -1 : 1));
  const topics: { leader: string[]; members: Variant[] }[] = [];
  const byWord = new Map<string, number[]>();
  let since = performance.now();
  for (const { members } of sets) {
    const words = members[0]!.words;
    const home = words.length === 0 ? undefined : firstHome(topics, byWord, words, threshold);
    if (home) home.members.push(...members);
    else {
      const at = topics.push({ leader: words, members: [...members] }) - 1;
      for (const w of words) {
        const list = byWord.get(w);
        if (list) list.push(at);
        else byWord.set(w, [at]);
      }
    }
    if (performance.now() - since >= STEP_MS) {
      yield;
      since = performance.now();
    }
  }
  yield;
  return topics.map(toTopic).sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : 1));
}

/** The first topic (in the order they were made) whose leader is close enough to `words`. */
function firstHome<T extends { leader: string[] }>(
  topics: readonly T[],
  byWord: ReadonlyMap<string, number[]>,
  words: readonly string[],
  threshold: number,
): T | undefined {
  if (threshold <= 0) return topics.find((t) => jaccard(t.leader, words) >= threshold);
  const candidates = new Set<number>();
  for (const w of words) for (const at of byWord.get(w) ?? []) candidates.add(at);
  for (const at of [...candidates].sort((a, b) => a - b)) {
    const t = topics[at]!;
    if (jaccard(t.leader, words) >= threshold) return t;
  }
  return undefined;
}

function* collectVariants(inputs: readonly TopicInput[]): Steps<Variant[]> {
  const byText = new Map<string, Variant>();
  let since = performance.now();
  for (const input of inputs) {
    if (performance.now() - since >= STEP_MS) {
      yield;
      since = performance.now();
    }
    const text = input.text.trim();
    if (text === '') continue;
    const words = tokens(text);
    // Identical wording (case, spacing) counts as one variant; a word-less text keys on itself.
    const id = words.length > 0 ? `${words.join(' ')}\n${text.toLowerCase()}` : text.toLowerCase();
    const v = byText.get(id) ?? { text, words, count: 0, at: undefined };
    v.count += input.count ?? 1;
    if (input.at && (!v.at || input.at > v.at)) v.at = input.at;
    byText.set(id, v);
  }
  return [...byText.values()];
}

const sum = (vs: Variant[]) => vs.reduce((n, v) => n + v.count, 0);

function toTopic(t: { leader: string[]; members: Variant[] }): Topic {
  // Most asked first; among equals the latest asked, then by text (stable).
  const variants = [...t.members].sort(
    (a, b) =>
      b.count - a.count || (b.at ?? '').localeCompare(a.at ?? '') || (a.text < b.text ? -1 : 1),
  );
  const lastAt = variants.reduce<string | undefined>(
    (m, v) => (v.at && (!m || v.at > m) ? v.at : m),
    undefined,
  );
  const key = t.leader.length > 0 ? t.leader.join(' ') : variants[0]!.text.toLowerCase();
  return {
    key,
    words: t.leader,
    count: sum(variants),
    example: variants[0]!.text,
    variants: variants.map((v) => ({ text: v.text, count: v.count })),
    lastAt,
  };
}
