import { createRequire } from 'node:module';
import type * as Snowball from 'snowball-stemmers';
import type * as Stopword from 'stopword';

/**
 * The two language packages load when grouping first needs them, not with the bot: most
 * processes never group a question between starts, and their word lists and stemmers hold
 * a few megabytes for the life of the process once loaded (both are CommonJS: `require`).
 */
const load = createRequire(import.meta.url);

/**
 * The languages grouping knows: a Snowball stemmer (snowball-stemmers) and a stop-word list
 * (stopword) for each. English is the default: most questions are in English, and product
 * words (API, SSO, webhook) are English in every language.
 */

export type Language = 'en' | 'fr' | 'de' | 'es' | 'pt' | 'it' | 'nl';
export const LANGUAGES: readonly Language[] = ['en', 'fr', 'de', 'es', 'pt', 'it', 'nl'];

const SNOWBALL: Record<Language, string> = {
  en: 'english',
  fr: 'french',
  de: 'german',
  es: 'spanish',
  pt: 'portuguese',
  it: 'italian',
  nl: 'dutch',
};

/**
 * Words of a question that say nothing about its subject, which the English list leaves in:
 * question words, politeness, "work" as in "does it work", contractions without their
 * apostrophe (the tokenizer splits on it).
 */
const QUESTION_WORDS =
  'am does doing done gets getting use using used need want possible please help anyone someone ' +
  'anything something ok okay hi hello thanks thank im dont cant doesnt isnt don t s ' +
  'via per vs ever again also just any all each best work works working know tell ' +
  'shall may yes no not without ' +
  // An API product's readers name the API in most questions, and `api key`, `api token` are
  // one term already (synonyms.ts): a bare `api` left over is rare only because its common
  // uses were absorbed, and would join "Wie kann ich API-Schlüssel rotieren?" with
  // "¿Cómo elimino una clave de API?" on that word alone.
  'api';

/** Accent-free lower case, for keys and comparisons. */
export function fold(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/** The same, for the other languages (their lists lack `comment`, `puedo`, `posso`). */
const OTHER_QUESTION_WORDS: Partial<Record<Language, string>> = {
  fr: 'comment pourquoi quand peut peux puis possible faut quel quelle quels quelles',
  de: 'bitte moglich gibt',
  es: 'puedo puede pueden hay cual cuales posible',
  pt: 'onde posso pode podem qual quais possivel',
  it: 'posso puo quale quali possibile',
  nl: 'kan kun waarom welke mogelijk',
};

const foldAll = (words: readonly string[]) => words.map(fold);
const listOf = (words: readonly string[], language: Language) =>
  new Set([...foldAll(words), ...(OTHER_QUESTION_WORDS[language]?.split(' ') ?? [])]);

interface Lists {
  stop: Record<Language, ReadonlySet<string>>;
  /** A language's own stop words, less the English ones: the evidence that a text is in it. */
  markers: [Language, ReadonlySet<string>][];
}
let lists: Lists | undefined;

function stopLists(): Lists {
  if (lists) return lists;
  const { deu, eng, fra, ita, nld, por, spa } = load('stopword') as typeof Stopword;
  const stop: Record<Language, ReadonlySet<string>> = {
    en: new Set([...foldAll(eng), ...QUESTION_WORDS.split(' ')]),
    fr: listOf(fra, 'fr'),
    de: listOf(deu, 'de'),
    es: listOf(spa, 'es'),
    pt: listOf(por, 'pt'),
    it: listOf(ita, 'it'),
    nl: listOf(nld, 'nl'),
  };
  const markers = LANGUAGES.filter((l) => l !== 'en').map((l): [Language, ReadonlySet<string>] => [
    l,
    new Set([...stop[l]].filter((w) => !stop.en.has(w))),
  ]);
  lists = { stop, markers };
  return lists;
}

/** Letters that hint at a language (before accents are folded away): one, or half a, marker. */
const HINTS: [RegExp, Language[], number][] = [
  [/[äöüß]/, ['de'], 1],
  [/[ñ¿¡]/, ['es'], 1],
  [/[ãõ]/, ['pt'], 1],
  [/[èêàùâîôœëïç]/, ['fr'], 0.5],
  [/[éíóúá]/, ['es', 'pt', 'fr'], 0.5],
];

/** How many markers another language needs: one stop word (`eu`, `ad`) is often English. */
const MIN_MARKERS = 2;

/**
 * The language of a question: the one whose own stop words it uses most, at least two and
 * more than English ones (`¿Cómo elimino una clave?`: como, una → Spanish), letters such as
 * ß or ñ counting as markers too; otherwise English (short fragments, product words).
 */
export function guessLanguage(lowerText: string, foldedWords: readonly string[]): Language {
  const { stop, markers: byLanguage } = stopLists();
  let english = 0;
  for (const w of foldedWords) if (stop.en.has(w)) english += 1;
  let best: Language = 'en';
  let bestScore = 0;
  for (const [language, markers] of byLanguage) {
    let score = 0;
    for (const w of foldedWords) if (markers.has(w)) score += 1;
    if (score === 0) continue;
    for (const [pattern, languages, weight] of HINTS)
      if (languages.includes(language) && pattern.test(lowerText)) score += weight;
    if (score >= MIN_MARKERS && score > english && score > bestScore)
      [best, bestScore] = [language, score];
  }
  return best;
}

/** A stop word in the text's language, or in English (read in every language). */
export function isStopWord(folded: string, language: Language): boolean {
  const { stop } = stopLists();
  return stop.en.has(folded) || stop[language].has(folded);
}

const stemmers = new Map<Language, { stem(word: string): string }>();
/** Stems already made, by language: readers use the same few thousand words again and again. */
const stems = new Map<Language, Map<string, string>>();
const MAX_CACHED_STEMS = 50_000;

/** The word's Snowball stem in `language`, accents folded (the stemmer sees them first). */
export function stemWord(lowerWord: string, language: Language): string {
  let cache = stems.get(language);
  const hit = cache?.get(lowerWord);
  if (hit !== undefined) return hit;
  let stemmer = stemmers.get(language);
  if (!stemmer) {
    stemmer = (load('snowball-stemmers') as typeof Snowball).newStemmer(SNOWBALL[language]);
    stemmers.set(language, stemmer);
  }
  // Digits and mixed tokens (429, int64, 2fa) are kept as they are.
  const stem = /\d/.test(lowerWord) ? fold(lowerWord) : fold(stemmer.stem(lowerWord));
  if (!cache || cache.size >= MAX_CACHED_STEMS) {
    cache = new Map();
    stems.set(language, cache);
  }
  cache.set(lowerWord, stem);
  return stem;
}
