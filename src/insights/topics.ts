import { drain, type Steps } from '../reports/turns.ts';
import { agglomerate, type Linkage } from './cluster.ts';
import { isStopWord } from './languages.ts';
import { defaultLexicon, type Prepared, prepare, termsOf } from './normalise.ts';
import { pacer } from './pace.ts';
import { meanVector, type SemanticOptions } from './semantic.ts';
import { compileLexicon, type Lexicon, type Stem } from './synonyms.ts';
import { typoMapSteps } from './typos.ts';
import { type Item, similarityEdges } from './vectors.ts';

/**
 * Grouping questions (or search terms) into topics by meaning (docs/grouping.md):
 *
 * 1. Each distinct text becomes a set of terms (normalise.ts: words stemmed in their language,
 *    typos folded, synonyms and abbreviations made one term, stop words dropped).
 * 2. Two texts are as alike as the cosine of their TF-IDF vectors, IDF squared (vectors.ts).
 *    The service's category (`queryCategory`), where it gave one: texts of two different
 *    categories are not alike at all; two of the same category count 1.3 times as alike
 *    (never more than 1). A category is coarse (one holds rotating and deleting keys), so it
 *    strengthens what the words say, and never joins texts on its own.
 * 3. Average-linkage agglomerative clustering (cluster.ts) joins the most alike topics while
 *    their mean similarity is at least the threshold (INSIGHTS_SIMILARITY, 0.3 by default).
 *
 * A text with no terms left (only stop words or punctuation) is its own topic, by its text.
 */

export const DEFAULT_SIMILARITY = 0.3;
/** IDF is squared (vectors.ts): distinctive words weigh much more than common ones. */
export const IDF_POWER = 2;
/**
 * The cosine of two questions the service put in the same category is multiplied by this: a
 * category is coarse (one holds rotating and deleting keys), but it is the service's reading
 * of the question, and it joins wordings that share little (`SAML`, `Okta SSO`).
 */
export const SAME_CATEGORY_FACTOR = 1.3;
/**
 * How the cosine of two texts' sentence vectors counts, when a team's embeddings endpoint
 * gave them (semantic.ts): `weight × max(0, (cos − zero) / (1 − zero))`, chosen on sets A
 * and B (docs/grouping.md).
 */
export const SEMANTIC: SemanticOptions = { weight: 0.4, zero: 0.3 };

export interface GroupingOptions {
  /** Mean cosine two topics need to be joined (0..1). */
  threshold: number;
  /** A team's synonym groups, added to the built-in ones (synonyms.ts). */
  synonyms: readonly (readonly string[])[];
  /** The rest are for comparing methods (`npm run eval:grouping`); the defaults are best. */
  linkage?: Linkage;
  /** Keep texts of different categories apart (default true). */
  categories?: boolean;
  sameCategoryFactor?: number;
  idfPower?: number;
  typos?: boolean;
  builtInSynonyms?: boolean;
  /** Word → stem (default: Snowball in the text's language). */
  stem?: Stem;
  /**
   * A text's sentence vector from a team's embeddings endpoint (embeddings.ts), if it has
   * one: two texts are then as alike as the larger of their TF-IDF cosine and their meaning
   * score, so paraphrases that share no word can meet. Unset: words alone.
   */
  vectors?: ((text: string) => Float32Array | undefined) | undefined;
  /** How the vectors' cosine counts (default `SEMANTIC`). */
  semantic?: SemanticOptions;
}

export const DEFAULT_GROUPING: GroupingOptions = { threshold: DEFAULT_SIMILARITY, synonyms: [] };

export interface TopicInput {
  text: string;
  /** How many times it was asked or searched (1 for one question). */
  count?: number;
  /** When it was last asked (ISO), to pick the example. */
  at?: string | undefined;
  /** The service's category for it (`queryCategory`), if any. */
  category?: string | null | undefined;
}

export interface Topic {
  /** The example's terms, sorted: a stable key for buttons and caches. */
  key: string;
  words: string[];
  /** Sum of the members' counts. */
  count: number;
  /** The most asked member text verbatim, the latest among equals (unescaped: Slack escapes). */
  example: string;
  /** Distinct texts, most frequent first. */
  variants: { text: string; count: number }[];
  lastAt: string | undefined;
  /** The category the service gave its questions, if any did. */
  category?: string | null;
}

interface Variant {
  text: string;
  count: number;
  at: string | undefined;
  /** Input position of its first occurrence: the last tie-break, never the alphabet. */
  first: number;
  categories: Map<string, number>;
  prepared: Prepared;
  terms: string[];
}

/** Topics, most asked first (see `byWeight` for ties); see the rule above. */
export function groupTopics(
  inputs: readonly TopicInput[],
  options: GroupingOptions = DEFAULT_GROUPING,
): Topic[] {
  return drain(groupTopicSteps(inputs, options));
}

/**
 * `groupTopics` in steps of a few milliseconds (src/reports/turns.ts): thousands of distinct
 * questions take a noticeable time to group, which must not hold an ack or an answer.
 */
export function* groupTopicSteps(
  inputs: readonly TopicInput[],
  options: GroupingOptions = DEFAULT_GROUPING,
): Steps<Topic[]> {
  const o = { ...DEFAULT_GROUPING, ...options };
  const lexicon = lexiconOf(o);
  const variants = yield* collectVariants(inputs);
  const typos = o.typos === false ? new Map<string, string>() : yield* typoMapOf(variants, lexicon);
  const due = pacer();
  for (const v of variants) {
    v.terms = termsOf(v.prepared, lexicon, typos, o.stem);
    if (due()) yield;
  }
  // Texts with the same terms (and category) are one item of the clustering.
  const wordless: Variant[][] = [];
  const byTerms = new Map<string, Variant[]>();
  for (const v of variants) {
    if (v.terms.length === 0) wordless.push([v]);
    else {
      const k = `${v.terms.join(' ')}\n${categoryOf(v) ?? ''}`;
      const list = byTerms.get(k);
      if (list) list.push(v);
      else byTerms.set(k, [v]);
    }
  }
  const groups = [...byTerms.values()];
  const useCategories = o.categories !== false;
  const items: Item[] = groups.map((g) => ({
    terms: g[0]!.terms,
    category: useCategories ? categoryOf(g[0]!) : null,
    weight: g.length,
  }));
  const vectorOf = o.vectors;
  const edges = yield* similarityEdges(items, {
    floor: Math.min(o.threshold, FLOOR),
    neighbours: NEIGHBOURS,
    categories: useCategories,
    sameCategoryFactor: o.sameCategoryFactor ?? SAME_CATEGORY_FACTOR,
    idfPower: o.idfPower ?? IDF_POWER,
    semantic: vectorOf && {
      vectors: groups.map((g) => meanVector(g.map((v) => vectorOf(v.text)))),
      score: o.semantic ?? SEMANTIC,
    },
  });
  const clusters = yield* agglomerate(
    items.map((i) => i.weight),
    items.map((i) => i.category),
    edges,
    o.threshold,
    o.linkage,
  );
  const topics = [...clusters.map((c) => c.flatMap((i) => groups[i]!)), ...wordless];
  yield;
  return topics
    .map(toTopic)
    .sort(byWeight)
    .map(({ first: _, ...topic }) => topic);
}

/**
 * Pairs less alike than this are read as not alike at all (vectors.ts), which keeps the
 * graph sparse; a mean of at least the threshold is rarely made of pairs this far below it.
 */
const FLOOR = 0.2;
/** Each text keeps this many of its most alike others as links (vectors.ts). */
const NEIGHBOURS = 20;

/** A team's lexicon, compiled once per synonym list (the configuration's is one list). */
const compiled = new WeakMap<readonly (readonly string[])[], Lexicon>();

function lexiconOf(o: GroupingOptions): Lexicon {
  if (o.builtInSynonyms === false || o.stem)
    return compileLexicon(o.synonyms, { builtIn: o.builtInSynonyms !== false, stem: o.stem });
  if (o.synonyms.length === 0) return defaultLexicon();
  let lexicon = compiled.get(o.synonyms);
  if (!lexicon) {
    lexicon = compileLexicon(o.synonyms);
    compiled.set(o.synonyms, lexicon);
  }
  return lexicon;
}

function* collectVariants(inputs: readonly TopicInput[]): Steps<Variant[]> {
  const byText = new Map<string, Variant>();
  const due = pacer();
  for (const [i, input] of inputs.entries()) {
    if (due()) yield;
    const text = input.text.trim();
    if (text === '') continue;
    // Identical wording (case, spacing) counts as one variant.
    const id = text.toLowerCase().replace(/\s+/g, ' ');
    let v = byText.get(id);
    if (!v) {
      v = {
        text,
        count: 0,
        at: undefined,
        first: i,
        categories: new Map(),
        prepared: prepare(text),
        terms: [],
      };
      byText.set(id, v);
    }
    v.count += input.count ?? 1;
    if (input.at && (!v.at || input.at > v.at)) v.at = input.at;
    if (input.category)
      v.categories.set(input.category, (v.categories.get(input.category) ?? 0) + 1);
  }
  return [...byText.values()];
}

/** Distinct texts per word (accent-free), for typo folding. */
function* typoMapOf(variants: readonly Variant[], lexicon: { vocabulary: ReadonlySet<string> }) {
  const counts = new Map<string, number>();
  for (const v of variants)
    for (const w of new Set(v.prepared.folded)) counts.set(w, (counts.get(w) ?? 0) + 1);
  yield;
  return yield* typoMapSteps(counts, lexicon.vocabulary, (w) => isStopWord(w, 'en'));
}

/** A text's category: the one the service gave it most often (the first among equals). */
function categoryOf(v: Variant): string | null {
  let best: string | null = null;
  let most = 0;
  for (const [c, n] of v.categories) if (n > most) [best, most] = [c, n];
  return best;
}

const sum = (vs: Variant[]) => vs.reduce((n, v) => n + v.count, 0);
const latest = (vs: Variant[]) =>
  vs.reduce<string | undefined>((m, v) => (v.at && (!m || v.at > m) ? v.at : m), undefined);

interface Ranked extends Topic {
  first: number;
}

function toTopic(members: Variant[]): Ranked {
  // Most asked first; among equals the latest asked, then the first to come in.
  const variants = [...members].sort(
    (a, b) => b.count - a.count || (b.at ?? '').localeCompare(a.at ?? '') || a.first - b.first,
  );
  const lead = variants[0]!;
  const categories = new Set(members.map(categoryOf).filter((c) => c !== null));
  return {
    key: lead.terms.length > 0 ? lead.terms.join(' ') : lead.text.toLowerCase(),
    words: lead.terms,
    count: sum(variants),
    example: lead.text,
    variants: variants.map((v) => ({ text: v.text, count: v.count })),
    lastAt: latest(variants),
    category: categories.size === 1 ? [...categories][0]! : null,
    first: Math.min(...members.map((v) => v.first)),
  };
}

/**
 * Most asked first; among topics asked as often, the one asked in more distinct wordings
 * (more readers, more ways), then the one asked most recently, then the one that came in
 * first. Never alphabetical: the alphabet says nothing about what readers need.
 */
function byWeight(a: Ranked, b: Ranked): number {
  return (
    b.count - a.count ||
    b.variants.length - a.variants.length ||
    (b.lastAt ?? '').localeCompare(a.lastAt ?? '') ||
    a.first - b.first
  );
}
