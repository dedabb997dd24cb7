// Types for the two language packages grouping uses (neither ships its own).

declare module 'snowball-stemmers' {
  /** A Snowball stemmer for `language` ('english', 'french', …); words must be lower case. */
  export function newStemmer(language: string): { stem(word: string): string };
  export function algorithms(): string[];
}

declare module 'stopword' {
  /** Stop words by ISO 639-3 code (`eng`, `fra`, `deu`, `spa`, `por`, `ita`, `nld`, …). */
  export const eng: string[];
  export const fra: string[];
  export const deu: string[];
  export const spa: string[];
  export const por: string[];
  export const ita: string[];
  export const nld: string[];
}
