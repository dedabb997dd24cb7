import { escapeAndTruncate } from '../mrkdwn.ts';

/** Longest page path shown, counted in escaped characters (what Slack counts). */
export const PATH_MAX = 70;
/** A link to a longer URL than this is left out: the path is shown as plain text. */
export const URL_MAX = 1_000;

/**
 * The page's URL under `baseUrl` (no trailing slash), every path segment percent-encoded so
 * that `|`, `<`, `>`, spaces and the like cannot end or forge the link; then `&` as `&amp;`,
 * as Slack wants it inside `<…>`. A lone surrogate is made well-formed first.
 */
export function pageUrl(baseUrl: string, path: string): string {
  const segments = path.toWellFormed().replace(/^\/+/, '').split('/');
  const encoded = segments.map((s) => encodeURIComponent(s)).join('/');
  return `${baseUrl}/${encoded}`.replace(/&/g, '&amp;');
}

/**
 * A page path as mrkdwn: escaped, then cut (so an `&`-heavy path cannot outgrow its share of
 * a block); a link to the page when the docs' base URL is known, else a code span.
 */
export function pagePath(path: string, baseUrl: string | undefined): string {
  const label = escapeAndTruncate(path, PATH_MAX);
  if (baseUrl) {
    const url = pageUrl(baseUrl, path);
    if (url.length <= URL_MAX) return `<${url}|${label}>`;
  }
  return `\`${label.replace(/`/g, "'")}\``;
}
