/** Slack mrkdwn text helpers: pure, shared by every feature that writes user-facing text. */
/**
 * Slack's three control characters in mrkdwn (https://api.slack.com/reference/surfaces/formatting#escaping).
 * Escaping them is what keeps user text from pinging `<!channel>` or forging `<url|label>`.
 */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
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

/** Quotes every line (`>`), for showing a prompt as a block quote. */
export function quote(text: string): string {
  return text
    .split('\n')
    .map((line) => `>${line}`)
    .join('\n');
}
