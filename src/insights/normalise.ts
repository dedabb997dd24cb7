import { fold, guessLanguage, isStopWord, type Language, stemWord } from './languages.ts';
import { applyLexicon, compileLexicon, type Lexicon, type Stem, splitWords } from './synonyms.ts';

export { fold };

/**
 * From a question to its terms, the words grouping compares (see topics.ts for how). Every
 * step is a library or a table a reader can check (docs/grouping.md):
 *
 * 1. Words are runs of letters or digits, lower case; punctuation, `-` and `'` separate.
 * 2. The language is guessed from its stop words (languages.ts): `¿Cómo elimino una clave?`
 *    is Spanish; anything without another language's stop words is English.
 * 3. Typos (typos.ts): a rare word one edit away from a word the other questions of the same
 *    report use more often is read as that word (`rotaet` → `rotate`).
 * 4. Each word is stemmed by that language's Snowball stemmer (`rotating`, `rotation` →
 *    `rotat`; `container` → `contain`, not `contact`; `integer` → `integ`, not `integr`), and
 *    accents are dropped after stemming (`clés` → `cle`).
 * 5. Synonyms and abbreviations (synonyms.ts) become their group's term, longest phrase
 *    first: `single sign-on`, `SAML` → `sso`; `429`, `too many requests` → `rate_limit`.
 * 6. Stop words (the stopword package's list for the language, and English's, plus question
 *    words such as `please`, `possible`) and one-letter words are dropped.
 * 7. The terms form a set: order and repetition do not count.
 */

export interface Prepared {
  /** Lower case words as typed; the same words accent-free. */
  words: string[];
  folded: string[];
  language: Language;
}

export function prepare(text: string): Prepared {
  const { lower, words } = splitWords(text);
  const folded = words.map(fold);
  return { words, folded, language: guessLanguage(lower, folded) };
}

/** The text's terms, sorted (steps 3–7 above). */
export function termsOf(
  p: Prepared,
  lexicon: Lexicon,
  typos: ReadonlyMap<string, string> = new Map(),
  stem: Stem = stemWord,
): string[] {
  const words = p.words.map((w, i) => typos.get(p.folded[i]!) ?? w);
  const stems = words.map((w) => stem(w, p.language));
  const isStop = (i: number) =>
    Array.from(words[i]!).length < 2 || isStopWord(fold(words[i]!), p.language);
  return [...new Set(applyLexicon(stems, isStop, lexicon))].sort();
}

let builtIn: Lexicon | undefined;

/** The built-in synonyms only, compiled once. */
export function defaultLexicon(): Lexicon {
  builtIn ??= compileLexicon([]);
  return builtIn;
}

/** One text's terms with the built-in synonyms and no typo folding (which needs a report). */
export function tokens(text: string, lexicon: Lexicon = defaultLexicon()): string[] {
  return termsOf(prepare(text), lexicon);
}
