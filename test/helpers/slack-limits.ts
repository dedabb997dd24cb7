/**
 * Slack's documented Block Kit limits for a message, checked on what is sent
 * (https://docs.slack.dev/reference/block-kit/blocks): at most 50 blocks; a header's
 * plain_text up to 150 characters; a section's text up to 3,000, at most 10 fields of up
 * to 2,000 each; a context at most 10 elements; a block_id up to 255; and a non-empty
 * top-level `text` (the notification and screen-reader fallback) within 40,000.
 */
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null;
const textOf = (v: unknown): string | undefined =>
  isObj(v) && typeof v.text === 'string' ? v.text : undefined;

export function slackLimitProblems(message: { text?: string; blocks?: unknown[] }): string[] {
  const problems: string[] = [];
  const blocks = message.blocks ?? [];
  if (!message.text?.trim()) problems.push('top-level text is empty');
  if ((message.text ?? '').length > 40_000) problems.push('top-level text over 40,000');
  if (blocks.length > 50) problems.push(`${blocks.length} blocks (max 50)`);
  for (const [i, b] of blocks.entries()) {
    const at = (why: string) => problems.push(`block ${i}: ${why}`);
    if (!isObj(b)) {
      at('not an object');
      continue;
    }
    if (typeof b.block_id === 'string' && b.block_id.length > 255) at('block_id over 255');
    const text = textOf(b.text);
    if (b.type === 'header' && (text ?? '').length > 150) at('header over 150');
    if (b.type === 'section') {
      if (text !== undefined && (text.length === 0 || text.length > 3_000))
        at(`section text of ${text.length} (1–3,000)`);
      const fields = Array.isArray(b.fields) ? b.fields : [];
      if (fields.length > 10) at(`${fields.length} fields (max 10)`);
      for (const f of fields) if ((textOf(f) ?? '').length > 2_000) at('field over 2,000');
      if (text === undefined && fields.length === 0) at('section without text or fields');
    }
    if (b.type === 'context') {
      const elements = Array.isArray(b.elements) ? b.elements : [];
      if (elements.length === 0 || elements.length > 10)
        at(`${elements.length} context elements (1–10)`);
      for (const e of elements) if ((textOf(e) ?? '').length > 3_000) at('context text over 3,000');
    }
  }
  return problems;
}
