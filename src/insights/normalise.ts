/**
 * Question normalisation for grouping (see topics.ts for the merge rule). Explainable on
 * purpose: a reader of the README must be able to predict which questions land together.
 *
 * 1. Unicode NFKD, accents dropped (`clés` → `cles`), lower case.
 * 2. Words are runs of letters or digits; everything else (punctuation, `-`, `'`) separates.
 * 3. Stop words are dropped: English question and function words, and the commonest French,
 *    German and Spanish ones; so are one-letter words.
 * 4. Stem-lite: a plural `-ies`/`-s` is cut (`keys` → `key`, not `-ss`/`-us`/`-is`), then
 *    `-ied` → `y`, `-ing`, `-ed`; then every word is cut to its first 5 letters, so
 *    `rotate`, `rotating`, `rotation` all become `rotat`, and `configure`/`configurer`
 *    become `confi`.
 * 5. The words form a set: order and repetition do not count.
 */

const STOP_WORDS = new Set(
  [
    // English
    'a an the i me my we our us you your it its is are was were be been being am do does did',
    'doing done have has had can could should would will shall may might must how what when',
    'where why which who whom whose this that these those to of in on at by for with without',
    'from into about as or and but if then than so not no yes there here get gets got getting',
    'use using used make way best possible please help need want any some all each also just',
    'only very too again ever still up out over after before via per vs anyone someone there',
    'is it ok okay hi hello thanks thank im dont cant doesnt isnt don',
    // French
    'le la les un une des du de et ou en est que qui quoi comment pour avec sans dans sur je',
    'mon ma mes vous votre vos nous ce cette il elle on pas ne peut puis faire',
    // German
    'der die das den dem des ein eine einen und oder ist sind wie was wo warum ich mein meine',
    'wir sie es kann konnen man mit ohne fur auf im zu nicht',
    // Spanish
    'el los las unos unas como que para con sin mi mis puedo se por es son lo',
  ]
    .join(' ')
    .split(' '),
);

const STEM_LENGTH = 5;

/** Accent-free lower case, for display keys and comparisons. */
export function fold(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

export function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 3 && w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 4 && w.endsWith('ied')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  return Array.from(w).slice(0, STEM_LENGTH).join('');
}

/** The question's word set (rule above), sorted so that equal sets print alike. */
export function tokens(text: string): string[] {
  const words = fold(text).match(/[\p{L}\p{N}]+/gu) ?? [];
  const set = new Set<string>();
  for (const w of words) {
    if (Array.from(w).length < 2 || STOP_WORDS.has(w)) continue;
    set.add(stem(w));
  }
  return [...set].sort();
}

/** Jaccard index of two sets: shared words over all words; 0 when both are empty. */
export function jaccard(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 && b.length === 0) return 0;
  const bs = new Set(b);
  let shared = 0;
  for (const x of a) if (bs.has(x)) shared++;
  return shared / (a.length + b.length - shared);
}
