/**
 * The grouping rule this project used before grouping by meaning, kept only as the baseline
 * of `npm run eval:grouping`: each text is cut to a set of 5-letter word stems, and joins the
 * first topic whose leader (its most frequent word set) shares at least 60% of their words
 * (token-set Jaccard ≥ 0.6). Not used by the bot.
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

function fold(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 3 && w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 4 && w.endsWith('ied')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  return Array.from(w).slice(0, STEM_LENGTH).join('');
}

export function oldTokens(text: string): string[] {
  const words = fold(text).match(/[\p{L}\p{N}]+/gu) ?? [];
  const set = new Set<string>();
  for (const w of words) {
    if (Array.from(w).length < 2 || STOP_WORDS.has(w)) continue;
    set.add(stem(w));
  }
  return [...set].sort();
}

function jaccard(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 && b.length === 0) return 0;
  const bs = new Set(b);
  let shared = 0;
  for (const x of a) if (bs.has(x)) shared++;
  return shared / (a.length + b.length - shared);
}

/** The old rule: clusters of input indexes. */
export function oldGrouping(texts: readonly string[], threshold = 0.6): number[][] {
  const bySet = new Map<string, { words: string[]; members: number[] }>();
  texts.forEach((text, i) => {
    const words = oldTokens(text);
    const k = words.length > 0 ? words.join(' ') : `\u0000${text.toLowerCase()}`;
    const s = bySet.get(k) ?? { words, members: [] };
    s.members.push(i);
    bySet.set(k, s);
  });
  const sets = [...bySet.entries()].sort(
    ([ka, a], [kb, b]) => b.members.length - a.members.length || (ka < kb ? -1 : 1),
  );
  const topics: { leader: string[]; members: number[] }[] = [];
  for (const [, s] of sets) {
    const home =
      s.words.length === 0
        ? undefined
        : topics.find((t) => jaccard(t.leader, s.words) >= threshold);
    if (home) home.members.push(...s.members);
    else topics.push({ leader: s.words, members: [...s.members] });
  }
  return topics.map((t) => t.members);
}
