/**
 * Masks personal data and secrets in text readers wrote (assistant questions, search terms,
 * feedback comments, the paths and URLs they were on), so that no report, digest, Draft it
 * form or agent prompt (and so no public pull request) repeats them. Pure; applied once,
 * where the insights sources parse what the API answers (src/insights/mask.ts).
 *
 * What is masked, in this order, each with a readable placeholder:
 *
 * - `[secret]`: the password of a URL (`https://user:pass@host` → `https://[secret]@host`);
 *   the value of a secret-named query parameter (`?token=…`, `&api_key=…`, `&sig=…`,
 *   `&code=…`, `&password=…`); the value of a secret-named assignment in text
 *   (`password=…`, `API_KEY=…`, `client_secret: …`; after `:` only a value with a digit in it,
 *   so "token: string" stays).
 * - `[key]`: API keys and tokens by their published prefixes (`mint_`, `sk-`, `sk_live_`,
 *   `xox?-`, `xapp-`, `ghp_`/`gho_`/…, `github_pat_`, `glpat-`, `AKIA…`, `AIza…`, `npm_`,
 *   `whsec_`), JSON Web Tokens (`eyJ….eyJ…`), `Bearer`/`Basic` credentials, PEM private
 *   keys, and unprefixed random-looking strings: 32+ hex characters, or 32+ characters of
 *   base64 with a digit, where digits and capitals make a quarter of it and lower case at
 *   least a sixth (camelCase words and paths do not).
 * - `[card]`: 13 to 19 digits, grouped or not, that pass the Luhn check.
 * - `[email]`: `local@domain.tld` (not `git@github.com`-style remotes).
 * - `[phone]`: 9 to 15 digits with spaces, dots, dashes or brackets between groups, or 8+
 *   after `+`/`00`; not a date (`2026-11-22`), an IPv4 address, a number grouped in
 *   thousands (`100 000 000`) or a list of years.
 *
 * Left as they are on purpose: version numbers (`v1.2.3`), dates and ISO timestamps, status
 * codes and small numbers, short ids, UUIDs (page, job and request ids people quote to the
 * docs team; a UUID-shaped key alone is rarely usable), a bare run of digits (an epoch time,
 * an order number), `@scope/package` and `pkg@1.2.3`. Not caught: a secret with no shape
 * ("my password is hunter2"), a half-typed address (`john@exa`), obfuscated addresses.
 */

const KEY = '[key]';
const SECRET = '[secret]';

/** Full names of parameters whose value is a secret (after an optional `x-amz-`, `access_`…). */
const SECRET_NAME =
  '(?:[A-Za-z0-9]{1,20}[_.-]){0,3}(?:token|secret|password|passwd|pwd|pass|api[_-]?key|apikey|key|signature|sig|code|session(?:[_-]?id)?|jwt|auth|authorization|credentials?)';
/** The same, for assignments in free text: the short generic ones (`key`, `code`…) are left. */
const STRONG_NAME =
  '(?:[A-Za-z0-9]{1,20}[_.-]){0,3}(?:token|secret|password|passwd|pwd|api[_-]?key|apikey|access[_-]?key|private[_-]?key|secret[_-]?key|credentials?)';

/** An assigned value: quoted (spaces and all) or up to a space or separator. */
const VALUE = `(?:"[^"\\n]{0,200}"|'[^'\\n]{0,200}'|[^\\s&"',;)]{1,200})`;

const RULES: readonly [RegExp, string | ((m: string, ...g: string[]) => string)][] = [
  // A URL's password, up to the last `@` before the host (a password may hold an `@`).
  [
    /(\b[a-z][a-z0-9+.-]{0,30}:\/\/)[^\s/?#@:]{1,200}:[^\s/?#]{1,200}@(?=[^\s@/?#])/gi,
    `$1${SECRET}@`,
  ],
  // A secret-named query parameter, in a URL or a path.
  [new RegExp(`([?&;#]${SECRET_NAME}=)[^&#\\s"'<>]+`, 'gi'), `$1${SECRET}`],
  // A secret-named assignment in text: `password=…` (any value), `api_key: …` (with a digit).
  [new RegExp(`((?:^|[\\s(,'"])${STRONG_NAME}\\s*=\\s*)${VALUE}`, 'gi'), `$1${SECRET}`],
  [
    new RegExp(`((?:^|[\\s(,'"])${STRONG_NAME}["']?\\s*:\\s*)(?=["']?[^\\s"']*\\d)${VALUE}`, 'gi'),
    `$1${SECRET}`,
  ],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g, KEY],
  [/\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*)?/g, KEY],
  [
    /\b([Bb]earer|[Bb]asic)(\s+)(?=[A-Za-z0-9._~+/=-]*(?:\d|[A-Z][a-z]|[a-z][A-Z]))[A-Za-z0-9._~+/-]{8,}=*/g,
    `$1$2${KEY}`,
  ],
  [
    new RegExp(
      `(?<![A-Za-z0-9])(?:${[
        'mint_[A-Za-z0-9_-]{8,}',
        'sk-[A-Za-z0-9_-]{16,}',
        '(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,}',
        'whsec_[A-Za-z0-9]{16,}',
        'xox[abposre]-[A-Za-z0-9-]{8,}',
        'xapp-[A-Za-z0-9-]{8,}',
        'gh[pousr]_[A-Za-z0-9]{20,}',
        'github_pat_[A-Za-z0-9_]{20,}',
        'glpat-[A-Za-z0-9_-]{16,}',
        '(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])',
        'AIza[0-9A-Za-z_-]{30,}',
        'npm_[A-Za-z0-9]{30,}',
      ].join('|')})`,
      'g',
    ),
    KEY,
  ],
  [/(?<![\p{L}\p{N}+])[2-6](?:[ -]?\d){12,18}(?![\p{L}\p{N}])/gu, (m) => (luhn(m) ? '[card]' : m)],
  [
    /(?<![\p{L}\p{N}._%+-])([\p{L}\p{N}._%+-]+)@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}(?![\p{L}\p{N}-])/gu,
    (m, local) => (local === 'git' ? m : '[email]'),
  ],
  [
    /(?<![\p{L}\p{N}_/.:+-])(?:\+|00)?\(?\d[\d ().\u00A0-]{0,40}\d(?![\p{L}\p{N}_/:]|[.-]\d)/gu,
    phones,
  ],
  [/(?<![\p{L}\p{N}_-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{32,}(?![\p{L}\p{N}_-])/giu, KEY],
  [
    /(?<![\p{L}\p{N}+/_=-])[A-Za-z0-9+/_-]{32,}={0,2}(?![\p{L}\p{N}+/_=-])/gu,
    (m) => (looksRandom(m) ? KEY : m),
  ],
];

/** Reader text with its personal data and secrets replaced by placeholders (rules above). */
export function redactPii(text: string): string {
  let out = text;
  for (const [re, to] of RULES) out = out.replace(re, to as string);
  return out;
}

function luhn(candidate: string): boolean {
  const digits = candidate.replace(/\D/g, '');
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * A run of digits and separators with its phone numbers masked: the whole run, or else its
 * longest space-separated stretches that are one ("call 555-123-4567 555-987-6543").
 */
function phones(run: string): string {
  if (isPhone(run)) return '[phone]';
  if (!run.includes(' ')) return run;
  const parts = run.split(' ');
  const out: string[] = [];
  for (let i = 0; i < parts.length; ) {
    let j = parts.length;
    while (j > i + 1 && !isPhone(parts.slice(i, j).join(' '))) j--;
    const stretch = parts.slice(i, j).join(' ');
    out.push(isPhone(stretch) ? '[phone]' : stretch);
    i = j;
  }
  return out.join(' ');
}

function isPhone(candidate: string): boolean {
  const digits = candidate.replace(/\D/g, '').length;
  const intl = /^(?:\+|00)/.test(candidate);
  if (digits > 15 || digits < (intl ? 8 : 9)) return false;
  const body = candidate.replace(/^(?:\+|00)/, '');
  if (!intl && !/[ ().\u00A0-]/.test(body)) return false; // a bare number: a time, an id
  if (/^\d{4}[-./]\d{1,2}[-./]\d{1,2}/.test(body) || /^\d{1,2}[-./]\d{1,2}[-./]\d{4}/.test(body))
    return false; // a date, maybe followed by a time
  if (/^\d{1,3}(?:\.\d{1,3}){3}$/.test(body)) return false; // IPv4
  if (/^\d{1,3}(?:([ .,\u00A0])\d{3})(?:\1\d{3})*$/.test(body)) return false; // 100 000 000
  if (/^(?:(?:19|20)\d\d[ ,/-]+)+(?:19|20)\d\d$/.test(body)) return false; // 2019-2020-2021
  return true;
}

/** A long base64-like run that is random, not a camelCase name or a path (rule above). */
function looksRandom(run: string): boolean {
  const s = run.replace(/=+$/, '');
  const digits = s.replace(/\D/g, '').length;
  const upper = s.replace(/[^A-Z]/g, '').length;
  const lower = s.replace(/[^a-z]/g, '').length;
  return digits > 0 && (digits + upper) / s.length >= 0.25 && lower / s.length >= 1 / 6;
}
