/** Slack mrkdwn text helpers: pure, shared by every feature that writes user-facing text. */
/**
 * Slack's three control characters in mrkdwn (https://api.slack.com/reference/surfaces/formatting#escaping).
 * Escaping them is what keeps user text from pinging `<!channel>` or forging `<url|label>`.
 */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Slack sends message and command text with `&`, `<` and `>` already encoded as entities
 * (the same three escapes). Decoding at the edge gives the agent what the person typed;
 * `escapeMrkdwn` encodes it again wherever it is shown.
 */
export function decodeSlackText(text: string): string {
  return unwrapSlackMarkup(text).replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/**
 * Raw `<…>` in Slack text is always markup (typed angle brackets arrive encoded): links,
 * mentions, channels, special mentions. The agent gets them as a person reads them.
 */
function unwrapSlackMarkup(text: string): string {
  return text.replace(/<([^<>]*)>/g, (_all, inner: string) => {
    const [target = '', label] = inner.split('|', 2);
    if (target.startsWith('@')) return label ? `@${label}` : target;
    if (target.startsWith('#')) return label ? `#${label}` : target;
    if (target.startsWith('!'))
      return `@${(label ?? target.slice(1)).replace(/^@|^subteam\^/, '')}`;
    const url = target.replace(/^mailto:/, '');
    return label && label !== url ? `${label} (${url})` : url;
  });
}

/**
 * Escapes, then cuts to `max` characters of *escaped* text (escaping lengthens it, and
 * Slack's limits apply to what is sent), never leaving half an entity at the cut.
 */
export function escapeAndTruncate(text: string, max: number): string {
  const escaped = escapeMrkdwn(text);
  if (escaped.length <= max) return escaped;
  return `${escaped
    .slice(0, Math.max(0, max - 1))
    .replace(/&[a-z]{0,3}$/, '')
    .replace(/[\uD800-\uDBFF]$/, '')}…`;
}

/** Cuts text to `max` characters, marking the cut. Counts UTF-16 units, as Slack does. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max - 1)).replace(/[\uD800-\uDBFF]$/, '')}…`;
}

/** A link whose label is user-safe; the URL itself must not contain `|` or `>`. */
export function link(url: string, label: string): string {
  const safeUrl = url.replace(/[|<>]/g, encodeURIComponent);
  return `<${safeUrl}|${escapeMrkdwn(label)}>`;
}

/**
 * Quotes lines (`>`) for showing a prompt as a block quote, within `max` characters of
 * output: quoting adds a character per line, so the line that does not fit is cut (never
 * inside an entity) and the rest dropped.
 */
export function quote(text: string, max = Number.POSITIVE_INFINITY): string {
  const out: string[] = [];
  let length = 0;
  for (const line of text.split('\n')) {
    const next = `>${line}`;
    const room = max - length - (out.length > 0 ? 1 : 0);
    if (next.length > room) {
      if (room >= 3) out.push(`${next.slice(0, room - 1).replace(/&[a-z]{0,3}$/, '')}…`);
      break;
    }
    out.push(next);
    length += next.length + (out.length > 1 ? 1 : 0);
  }
  return out.join('\n');
}
