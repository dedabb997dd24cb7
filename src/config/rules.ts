import { z } from 'zod';

/**
 * The rules config.ts builds its schema from: blank-means-unset strings, durations, counts,
 * URLs and comma-separated lists. None of their messages repeats the value it refuses.
 */

/** Blank values count as unset: `FOO=` in a .env file should mean "use the default". */
export const optionalString = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
  z.string().trim().optional(),
);

/** A duration in milliseconds; `atLeast` names a floor and why it is there. */
export const positiveInt = (fallback: number, atLeast?: { ms: number; why: string }) => {
  const ms = z.coerce
    .number({ error: 'must be a whole number of milliseconds' })
    .int({ error: 'must be a whole number of milliseconds' });
  return z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
    (atLeast
      ? ms.min(atLeast.ms, { error: `must be at least ${atLeast.ms} (${atLeast.why})` })
      : ms.positive({ error: 'must be greater than 0' })
    ).default(fallback),
  );
};

/** A count between `min` and `max` (a concurrency, a ceiling), `fallback` when unset. */
export const wholeNumber = (fallback: number, min: number, max: number) =>
  z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
    z.coerce
      .number({ error: 'must be a whole number' })
      .int({ error: 'must be a whole number' })
      .min(min, { error: `must be at least ${min}` })
      .max(max, { error: `must be at most ${max}` })
      .default(fallback),
  );

export const httpUrl = (fallback: string) =>
  z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
    z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).default(fallback),
  );

export const optionalHttpUrl = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
  z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
);

/** What a Mintlify project id looks like (letters, digits, `_` and `-`). */
export const PROJECT_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;
export const SLACK_USER_ID = /^[UW][A-Z0-9]{2,}$/;

/** `a,b , c` → ['a', 'b', 'c']; blank means none. */
export const commaList = (v: unknown) =>
  typeof v === 'string'
    ? v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
    : v;

/** `proj_a=mint_…,proj_b=mint_…` → { proj_a: 'mint_…', … }; the keys are never echoed. */
export const projectKeys = z.preprocess(
  commaList,
  z
    .array(
      z
        .string()
        .refine((pair) => /^[^=]+=.+$/.test(pair) && PROJECT_ID.test(pair.split('=')[0]!.trim()), {
          error: 'must be a comma-separated list of projectId=key pairs',
        }),
    )
    .default([])
    .transform((pairs) =>
      Object.fromEntries(
        pairs.map((pair) => {
          const at = pair.indexOf('=');
          return [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
        }),
      ),
    ),
);
/**
 * A comma-separated list of Slack ids (blank or unset: undefined, nobody left out). A bad
 * entry is named by its place in the list, never by its text: no value is echoed.
 */
export const slackIdList = (kind: string, pattern: RegExp, example: string) =>
  z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
    z
      .string()
      .transform((v, ctx) => {
        const ids = v
          .split(',')
          .map((id) => id.trim())
          .filter(Boolean);
        const bad = ids.flatMap((id, i) => (pattern.test(id) ? [] : [i + 1]));
        if (bad.length > 0)
          ctx.addIssue({
            code: 'custom',
            message: `must be comma-separated Slack ${kind} ids such as ${example}; ${
              bad.length === 1 ? `entry ${bad[0]}` : `entries ${bad.slice(0, 5).join(', ')}`
            } of ${ids.length} ${bad.length === 1 ? 'is' : 'are'} not`,
          });
        return ids.length > 0 ? ids : undefined;
      })
      .optional(),
  );

/** The most synonym groups, and the longest term, INSIGHTS_SYNONYMS may hold. */
const MAX_GROUPS = 200;
const MAX_TERM = 60;

/**
 * `sso=single sign-on=saml;429=rate limit` → [['sso', 'single sign-on', 'saml'], ['429',
 * 'rate limit']]: groups separated by `;`, each two or more terms joined by `=`; blank
 * means none. A bad group is named by its place, never by its text.
 */
export const synonymGroups = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
  z
    .string()
    .transform((v, ctx) => {
      const groups = v
        .split(';')
        .map((g) => g.split('=').map((t) => t.trim().replace(/\s+/g, ' ')))
        .filter((g) => g.some(Boolean));
      const why = (g: string[]) =>
        g.filter((t) => /[\p{L}\p{N}]/u.test(t)).length < 2 || g.some((t) => t === '')
          ? 'has fewer than two terms, or an empty one'
          : g.some((t) => t.length > MAX_TERM)
            ? `has a term longer than ${MAX_TERM} characters`
            : undefined;
      const bad = groups.flatMap((g, i) => (why(g) ? [`group ${i + 1} ${why(g)}`] : []));
      if (groups.length > MAX_GROUPS) bad.unshift(`holds more than ${MAX_GROUPS} groups`);
      if (bad.length > 0)
        ctx.addIssue({
          code: 'custom',
          message: `must be groups of two or more terms joined by =, separated by ; (such as sso=single sign-on=saml;429=rate limit): ${bad.slice(0, 3).join('; ')}`,
        });
      return groups;
    })
    .default([]),
);

/** A number above 0 and at most 1 (a similarity), `fallback` when unset. */
export const fraction = (fallback: number) =>
  z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
    z.coerce
      .number({ error: 'must be a number above 0 and at most 1, such as 0.3' })
      .gt(0, { error: 'must be a number above 0 and at most 1, such as 0.3' })
      .max(1, { error: 'must be a number above 0 and at most 1, such as 0.3' })
      .default(fallback),
  );
