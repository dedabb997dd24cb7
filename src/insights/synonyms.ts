import { fold, LANGUAGES, type Language, stemWord } from './languages.ts';

/**
 * Synonyms and abbreviations: each group's phrases stand for one term when questions are
 * compared (`SAML` and `single sign-on` both become `sso`). Phrases are matched
 * on stems (languages.ts), longest first, before stop words are dropped, so `too many
 * requests` and `rate limits` match whatever their inflection. A team adds its own groups
 * with INSIGHTS_SYNONYMS (`sso=entra id;pr=pull request`); a group that shares a phrase with
 * another (here `sso`) is joined to it.
 *
 * The built-in groups are general SaaS and docs vocabulary that a docs team would agree on
 * without looking at any one set of questions: abbreviations, spellings, HTTP status codes
 * by their names, and words readers use for the same thing (`contact` = `support` =
 * `human`; `revoke` = `delete`; `download` = `export`). None exists to join one pair of a
 * test set; each was kept only if it helps sets A or B of the evaluation as a whole (a
 * bigger table was measured: `error` = `fail`, `page` = `doc`, `change` = `update`,
 * `user` = `member`, `import` = `upload` changed nothing or cost precision, and `roll` =
 * `rotate` let a deletion join the rotations). A bare `token` is not an `api key` (access tokens expire, keys
 * are rotated), and `okta` is left alone: it may be about SCIM, not sign-on, and a search for
 * `okta` must still find the question "How to set up Okta SSO" (gaps.ts joins them by words).
 */
export const BUILT_IN_SYNONYMS: readonly (readonly string[])[] = [
  ['sso', 'single sign-on', 'saml'],
  ['rate limit', 'ratelimit', 'rate limiting', '429', 'too many requests', 'throttle'],
  [
    '2fa',
    'mfa',
    'two-factor',
    'two-factor authentication',
    'multi-factor',
    'multi-factor authentication',
    '2-step verification',
    'two-step verification',
    'totp',
    'authenticator',
    'authenticator app',
  ],
  ['key', 'api key', 'apikey', 'api token'],
  ['delete', 'remove', 'erase', 'get rid of', 'revoke'],
  ['rotate', 'regenerate'],
  ['support', 'contact', 'human', 'agent', 'help desk'],
  ['price', 'pricing', 'cost'],
  ['limit', 'max', 'maximum', 'quota'],
  ['timeout', 'time out', 'timed out', '408', '504', 'gateway timeout'],
  ['redirect', '301', '302', '308'],
  ['sandbox', 'test mode', 'test environment'],
  ['invoice', 'receipt'],
  ['export', 'download'],
  ['custom domain', 'own domain', 'subdomain'],
  ['cors', 'access control allow origin', 'cross origin'],
  ['changelog', 'release notes', "what's new"],
  ['openapi', 'swagger'],
  ['role', 'permission'],
  ['scim', 'user provisioning', 'provisioning'],
  ['configure', 'set up', 'setup', 'configuration', 'config'],
  ['login', 'log in', 'sign in', 'signin'],
  ['logout', 'log out', 'sign out'],
  ['signup', 'sign up'],
  ['webhook', 'web hook'],
  ['docs', 'documentation'],
  ['repository', 'repo'],
  ['environment variable', 'env var', 'env variable'],
  ['authentication', 'auth'],
  ['color', 'colour'],
  ['customize', 'customise'],
  ['organization', 'organisation'],
  ['authorization', 'authorisation'],
  ['analyze', 'analyse'],
];

/** A text's words: lower case as typed (for stemmers), and accent-free (for lists). */
export function splitWords(text: string): { lower: string; words: string[] } {
  const lower = text.normalize('NFC').toLowerCase();
  return { lower, words: lower.match(/[\p{L}\p{N}]+/gu) ?? [] };
}

export interface Lexicon {
  /** Stems of a phrase (space-separated), in any language's stemmer → its group's term. */
  phrases: ReadonlyMap<string, string>;
  /** The most words any phrase has. */
  longest: number;
  /** Each phrase's first stem: a word that starts none needs no look-up. */
  starts: ReadonlySet<string>;
  /** Accent-free words of every phrase: typo folding may correct towards them. */
  vocabulary: ReadonlySet<string>;
}

export type Stem = (lowerWord: string, language: Language) => string;

/**
 * The phrase table for `groups` (the built-in ones first unless `builtIn` is false): each
 * phrase is stemmed by every language's stemmer, so an English phrase matches in a French
 * question too. A group's term is its first phrase's English stems joined with `_`.
 */
export function compileLexicon(
  groups: readonly (readonly string[])[],
  opts: { builtIn?: boolean; stem?: Stem } = {},
): Lexicon {
  const stem = opts.stem ?? stemWord;
  const all = [...(opts.builtIn === false ? [] : BUILT_IN_SYNONYMS), ...groups];
  const keyOf = (phrase: string, language: Language) =>
    splitWords(phrase)
      .words.map((w) => stem(w, language))
      .join(' ');
  // Groups sharing a phrase (by its English stems) are one group: union-find on the phrases.
  const parent = new Map<string, string>();
  const root = (k: string): string => {
    const p = parent.get(k) ?? k;
    if (p === k) return k;
    const r = root(p);
    parent.set(k, r);
    return r;
  };
  for (const group of all) {
    const keys = group.map((p) => keyOf(p, 'en')).filter((k) => k !== '');
    for (const k of keys) if (!parent.has(k)) parent.set(k, k);
    for (const k of keys.slice(1)) {
      const [a, b] = [root(keys[0]!), root(k)];
      if (a !== b) parent.set(b, a);
    }
  }
  const phrases = new Map<string, string>();
  const starts = new Set<string>();
  const vocabulary = new Set<string>();
  let longest = 1;
  for (const group of all) {
    for (const phrase of group) {
      const english = keyOf(phrase, 'en');
      if (english === '') continue;
      const term = root(english).replaceAll(' ', '_');
      for (const w of splitWords(phrase).words) vocabulary.add(fold(w));
      for (const language of LANGUAGES) {
        const key = keyOf(phrase, language);
        if (!phrases.has(key)) phrases.set(key, term);
        starts.add(key.split(' ')[0]!);
        longest = Math.max(longest, key.split(' ').length);
      }
    }
  }
  return { phrases, longest, starts, vocabulary };
}

/**
 * The terms of a stemmed text: at each position the longest phrase of the lexicon starting
 * there becomes its group's term; other words are kept unless `isStop(i)`.
 */
export function applyLexicon(
  stems: readonly string[],
  isStop: (i: number) => boolean,
  lexicon: Lexicon,
): string[] {
  const out: string[] = [];
  for (let i = 0; i < stems.length; ) {
    let matched = 0;
    const from = lexicon.starts.has(stems[i]!) ? Math.min(lexicon.longest, stems.length - i) : 0;
    for (let n = from; n >= 1; n--) {
      const term = lexicon.phrases.get(stems.slice(i, i + n).join(' '));
      if (term !== undefined) {
        out.push(term);
        matched = n;
        break;
      }
    }
    if (matched === 0) {
      if (!isStop(i)) out.push(stems[i]!);
      matched = 1;
    }
    i += matched;
  }
  return out;
}
