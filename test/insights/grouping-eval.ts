import lemmatize from 'wink-lemmatizer';
import { fold, type Language, stemWord } from '../../src/insights/languages.ts';
import { prepare, termsOf } from '../../src/insights/normalise.ts';
import { compileLexicon } from '../../src/insights/synonyms.ts';
import {
  DEFAULT_GROUPING,
  type GroupingOptions,
  groupTopicSteps,
  groupTopics,
  type TopicInput,
} from '../../src/insights/topics.ts';
import { oldGrouping } from './grouping-baseline.ts';
import { GROUPING_SET, type LabelledQuestion } from './grouping-set.ts';

/**
 * Measuring grouping against the labelled set (grouping-set.ts): `npm run eval:grouping`
 * prints these figures for every method, and grouping-eval.test.ts holds the default to them.
 *
 * Pairwise: every pair of questions is either in one topic or not, and the labels say
 * whether it should be. Precision: of the pairs put together, the share that belong
 * together; recall: of the pairs that belong together, the share put together; F1 their
 * harmonic mean. ARI (adjusted Rand index): agreement over all pairs, corrected for chance
 * (1 = the labels exactly, 0 = no better than random topics of the same sizes).
 */

export interface Scores {
  precision: number;
  recall: number;
  f1: number;
  ari: number;
  topics: number;
}

const pairs = (n: number) => (n * (n - 1)) / 2;

/** Scores of `clusters` (lists of indexes into `labels`) against the labels. */
export function score(labels: readonly string[], clusters: readonly (readonly number[])[]): Scores {
  const both = new Map<string, number>();
  const byLabel = new Map<string, number>();
  for (const l of labels) byLabel.set(l, (byLabel.get(l) ?? 0) + 1);
  let together = 0;
  for (const [c, members] of clusters.entries()) {
    together += pairs(members.length);
    for (const i of members) {
      const k = `${c}\u0000${labels[i]}`;
      both.set(k, (both.get(k) ?? 0) + 1);
    }
  }
  const agreed = [...both.values()].reduce((s, n) => s + pairs(n), 0);
  const belong = [...byLabel.values()].reduce((s, n) => s + pairs(n), 0);
  const precision = together === 0 ? 1 : agreed / together;
  const recall = belong === 0 ? 1 : agreed / belong;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  const expected = (together * belong) / pairs(labels.length);
  const ceiling = (together + belong) / 2;
  const ari = ceiling === expected ? 1 : (agreed - expected) / (ceiling - expected);
  return { precision, recall, f1, ari, topics: clusters.length };
}

/** Clusters as indexes into `set`, from the topics' verbatim variants. */
function clustersOf(set: readonly LabelledQuestion[], inputs: TopicInput[], o: GroupingOptions) {
  const index = new Map(set.map((q, i) => [q.text.toLowerCase(), i]));
  return groupTopics(inputs, o).map((t) => t.variants.map((v) => index.get(v.text.toLowerCase())!));
}

export interface Method {
  name: string;
  run: (set: readonly LabelledQuestion[]) => number[][];
}

/** The new grouping with `over` changed; questions carry their categories unless told. */
export function grouping(name: string, over: Partial<GroupingOptions> = {}): Method {
  const o = { ...DEFAULT_GROUPING, ...over };
  return {
    name,
    run: (set) =>
      clustersOf(
        set,
        set.map((q) => ({ text: q.text, category: q.category })),
        o,
      ),
  };
}

/** A team's own glossary in its readers' languages, as INSIGHTS_SYNONYMS would give it. */
export const TEAM_GLOSSARY = [
  [
    'key',
    'clé',
    'clé api',
    'api-schlüssel',
    'schlüssel',
    'clave',
    'clave de api',
    'chave',
    'chave de api',
  ],
  ['delete', 'supprimer', 'löschen', 'eliminar', 'borrar', 'excluir'],
  ['rotate', 'rotation', 'rotieren', 'rotar'],
  ['custom domain', 'domaine personnalisé', 'dominio personalizado', 'domínio personalizado'],
  ['rate limit', 'límite de peticiones', 'limite de requêtes', 'ratenbegrenzung'],
  ['2fa', 'zwei-faktor', 'zwei-faktor-authentifizierung', 'double authentification'],
];

/** English words by their dictionary form (WordNet, wink-lemmatizer): `rotating` → `rotate`. */
function lemma(word: string): string {
  for (const form of [lemmatize.verb, lemmatize.noun, lemmatize.adjective]) {
    const l = form(word);
    if (l !== word) return l;
  }
  return word;
}
const english = (w: string, l: Language) => l === 'en' && !/\d/.test(w);
const lemmas = (w: string, l: Language) => (english(w, l) ? fold(lemma(w)) : stemWord(w, l));
const lemmaStems = (w: string, l: Language) =>
  english(w, l) ? stemWord(lemma(w), 'en') : stemWord(w, l);

export const METHODS: Method[] = [
  {
    name: 'old rule: 5-letter cut, leader Jaccard >= 0.6',
    run: (set) => oldGrouping(set.map((q) => q.text)),
  },
  grouping('default: TF-IDF cosine, average linkage, categories'),
  grouping('  without categories (as search terms are)', { categories: false }),
  grouping('  without built-in synonyms', { builtInSynonyms: false }),
  grouping('  without typo folding', { typos: false }),
  grouping('  complete linkage', { linkage: 'complete' }),
  grouping('  single linkage', { linkage: 'single' }),
  grouping('  plain TF-IDF (IDF not squared)', { idfPower: 1 }),
  grouping('  IDF cubed, not squared', { idfPower: 3 }),
  grouping('  same category counts x1, not x1.3', { sameCategoryFactor: 1 }),
  grouping('  same category counts x1.6', { sameCategoryFactor: 1.6 }),
  grouping('  English lemmas (wink-lemmatizer), not stems', { stem: lemmas }),
  grouping('  English lemmas, then stems', { stem: lemmaStems }),
  grouping('  + a team glossary in fr/de/es (INSIGHTS_SYNONYMS)', { synonyms: TEAM_GLOSSARY }),
];

/**
 * The best any method on these terms (without typo folding) could do: questions of one intent that share a term,
 * directly or through others, in one topic, and nothing else. What it misses shares no word
 * with the rest of its intent after normalisation: only meaning, not words, could join it.
 */
export function lexicalCeiling(set: readonly LabelledQuestion[]): Scores {
  const lexicon = compileLexicon([]);
  const terms = set.map((q) => termsOf(prepare(q.text), lexicon));
  const parent = set.map((_, i) => i);
  const root = (i: number): number => {
    while (parent[i] !== i) i = parent[i]!;
    return i;
  };
  for (let i = 0; i < set.length; i++)
    for (let j = i + 1; j < set.length; j++)
      if (set[i]!.intent === set[j]!.intent && terms[i]!.some((t) => terms[j]!.includes(t)))
        parent[root(i)] = root(j);
  const groups = new Map<number, number[]>();
  for (const i of set.keys()) groups.set(root(i), [...(groups.get(root(i)) ?? []), i]);
  return score(
    set.map((q) => q.intent),
    [...groups.values()],
  );
}

/** The default at other thresholds: a flat top means the threshold is not tuned to the set. */
export const THRESHOLDS = [0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6];

export function evaluate(method: Method, set: readonly LabelledQuestion[] = GROUPING_SET): Scores {
  return score(
    set.map((q) => q.intent),
    method.run(set),
  );
}

/** Whether any topic of `method` holds questions of both intents. */
export function mixes(method: Method, a: string, b: string, set = GROUPING_SET): boolean {
  return method.run(set).some((c) => {
    const intents = new Set(c.map((i) => set[i]!.intent));
    return intents.has(a) && intents.has(b);
  });
}

/** A deterministic random number generator (mulberry32), for the timing corpus. */
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `n` distinct texts for timing: half are the labelled questions with a context added (as
 * readers add "in python", "on the free plan"), half a long tail of questions made of
 * invented product words, each asked once.
 */
export function timingCorpus(n: number, seed = 7): TopicInput[] {
  const rnd = random(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const contexts = [
    'in python',
    'with node',
    'on the free plan',
    'for my team',
    'in production',
    'via terraform',
    'from github actions',
    'with the v2 api',
    'on windows',
    'in the eu region',
    'for staging',
    'using curl',
    'in go',
    'with docker compose',
    'for a monorepo',
    'after upgrading',
  ];
  const syllables = 'ka lo mi ne ru sa ti vo ze pa bri cro dex fla gor hul jin kel mor nix'.split(
    ' ',
  );
  const word = () =>
    Array.from({ length: 2 + Math.floor(rnd() * 2) }, () => pick(syllables)).join('');
  const vocabulary = Array.from({ length: 3_000 }, word);
  const starts = ['how do I', 'can I', 'why does', 'where is', 'what is', 'how to'];
  const seen = new Set<string>();
  const out: TopicInput[] = [];
  while (out.length < n) {
    const text =
      rnd() < 0.5
        ? `${pick(GROUPING_SET).text} ${pick(contexts)} ${pick(contexts)}`
        : `${pick(starts)} ${Array.from({ length: 2 + Math.floor(rnd() * 4) }, () => pick(vocabulary)).join(' ')}`;
    if (seen.has(text)) continue;
    seen.add(text);
    out.push({ text, at: new Date(Date.UTC(2026, 10, 1) + out.length * 60_000).toISOString() });
  }
  return out;
}

/** Groups `inputs` step by step: the whole time, the longest step and the number of steps. */
export function timeGrouping(inputs: readonly TopicInput[], o: GroupingOptions = DEFAULT_GROUPING) {
  const steps = groupTopicSteps(inputs, o);
  let longest = 0;
  let count = 0;
  const started = performance.now();
  for (;;) {
    const t = performance.now();
    const r = steps.next();
    longest = Math.max(longest, performance.now() - t);
    count++;
    if (r.done)
      return {
        ms: performance.now() - started,
        longestStepMs: longest,
        steps: count,
        topics: r.value.length,
      };
  }
}
