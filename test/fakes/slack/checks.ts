/**
 * Slack's checks of what a bot sends: message content, thread ts, Block Kit blocks and
 * buttons, modals. Pure: each answers Slack's error, or undefined when Slack would accept.
 */
import { randomBytes } from 'node:crypto';
import { fail, isObj, type Json, str } from './wire.ts';

// Slack's documented Block Kit limits for the block types a bot is likely to send.
const TEXT_LIMITS: Record<string, number> = { section: 3000, header: 150, markdown: 12000 };
const BLOCK_TYPES = new Set([
  ...['actions', 'context', 'divider', 'file', 'header', 'image', 'input', 'markdown'],
  ...['rich_text', 'section', 'table', 'video'],
]);

export function threadTsError(threadTs: unknown): Json | undefined {
  if (threadTs === undefined || threadTs === '') return undefined;
  return /^\d+\.\d+$/.test(String(threadTs)) ? undefined : fail('invalid_thread_ts');
}

export function contentError(a: Json): Json | undefined {
  const blocksErr = a.blocks === undefined ? undefined : blocksError(a.blocks);
  if (blocksErr) return blocksErr;
  const hasBlocks = Array.isArray(a.blocks) && a.blocks.length > 0;
  const hasAttachments = Array.isArray(a.attachments) && a.attachments.length > 0;
  if (!str(a.text) && !hasBlocks && !hasAttachments) return fail('no_text');
  if (typeof a.text === 'string' && a.text.length > 40_000) return fail('msg_too_long');
  const md = a.metadata;
  if (
    md !== undefined &&
    !(isObj(md) && typeof md.event_type === 'string' && isObj(md.event_payload))
  ) {
    return fail('invalid_metadata_format');
  }
  return undefined;
}

/** Slack's checks of a modal: type, title and button labels (24 chars), blocks, metadata. */
export function viewError(view: unknown): Json | undefined {
  const bad = (why: string) =>
    fail('invalid_arguments', { response_metadata: { messages: [`[ERROR] ${why}`] } });
  if (!isObj(view) || view.type !== 'modal') return bad('view.type must be modal');
  for (const key of ['title', 'submit', 'close']) {
    const t = view[key];
    if (t === undefined && key !== 'title') continue;
    if (!isObj(t) || t.type !== 'plain_text' || typeof t.text !== 'string' || !t.text)
      return bad(`${key} must be plain_text`);
    if (t.text.length > 24) return bad(`${key} must be less than 25 characters`);
  }
  const blocks = Array.isArray(view.blocks) ? view.blocks : undefined;
  if (!blocks) return bad('blocks is required');
  const hasInput = blocks.some((b) => isObj(b) && b.type === 'input');
  if (hasInput && view.submit === undefined) return bad('submit is required with input blocks');
  if (typeof view.private_metadata === 'string' && view.private_metadata.length > 3000)
    return bad('private_metadata must be less than 3001 characters');
  return blocksError(blocks);
}

export function blocksError(blocks: unknown): Json | undefined {
  if (!Array.isArray(blocks)) return fail('invalid_blocks_format');
  const bad = (i: number, why: string) =>
    fail('invalid_blocks', {
      errors: [`${why} [json-pointer:/blocks/${i}]`],
      response_metadata: { messages: [`[ERROR] ${why} [json-pointer:/blocks/${i}]`] },
    });
  if (blocks.length > 50) return bad(50, 'no more than 50 items allowed');
  const ids = new Set<string>();
  for (const [i, b] of blocks.entries()) {
    if (!isObj(b) || typeof b.type !== 'string' || !BLOCK_TYPES.has(b.type))
      return bad(i, 'unsupported type');
    const text = b.type === 'markdown' ? b.text : isObj(b.text) ? b.text.text : undefined;
    const limit = TEXT_LIMITS[b.type];
    if (
      limit !== undefined &&
      text !== undefined &&
      (typeof text !== 'string' || text.length === 0)
    ) {
      return bad(i, 'must be more than 0 characters');
    }
    if (limit !== undefined && typeof text === 'string' && text.length > limit) {
      return bad(i, `must be less than ${limit + 1} characters`);
    }
    if (b.type === 'section' && text === undefined && !Array.isArray(b.fields))
      return bad(i, 'must provide text or fields');
    if (b.type === 'header' && (!isObj(b.text) || b.text.type !== 'plain_text'))
      return bad(i, 'header text must be plain_text');
    if (Array.isArray(b.fields) && b.fields.length > 10)
      return bad(i, 'no more than 10 fields allowed');
    if (Array.isArray(b.elements) && b.elements.length > (b.type === 'actions' ? 25 : 10))
      return bad(i, 'too many elements');
    const elementErr = b.type === 'actions' ? buttonsError(b.elements) : undefined;
    if (elementErr) return bad(i, elementErr);
    const accessory = isObj(b.accessory) ? b.accessory : undefined;
    const accessoryErr = accessory?.type === 'overflow' ? overflowError(accessory) : undefined;
    if (accessoryErr) return bad(i, accessoryErr);
    if (typeof b.block_id === 'string') {
      if (b.block_id.length > 255 || ids.has(b.block_id))
        return bad(i, 'invalid or duplicate block_id');
      ids.add(b.block_id);
    }
  }
  return undefined;
}

/** Slack's limits on buttons: a label of 75 characters, a URL of 3,000, a value of 2,000, unique action ids. */
function buttonsError(elements: unknown): string | undefined {
  if (!Array.isArray(elements) || elements.length === 0) return 'elements must not be empty';
  const ids = new Set<string>();
  for (const e of elements) {
    if (!isObj(e) || e.type !== 'button') continue;
    const label = isObj(e.text) ? e.text.text : undefined;
    if (typeof label !== 'string' || !label || label.length > 75) return 'invalid button text';
    if (typeof e.url === 'string' && e.url.length > 3000) return 'button url too long';
    if (typeof e.value === 'string' && e.value.length > 2000) return 'button value too long';
    const id = typeof e.action_id === 'string' ? e.action_id : '';
    if (id && ids.has(id)) return 'duplicate action_id';
    ids.add(id);
  }
  return undefined;
}

/**
 * Slack's limits on an overflow menu: 2 to 5 options, each a plain_text label of at most 75
 * characters and a value of at most 150; an action id of at most 255.
 */
function overflowError(menu: Json): string | undefined {
  const options = Array.isArray(menu.options) ? menu.options : [];
  if (options.length < 2 || options.length > 5) return 'overflow must have 2 to 5 options';
  if (typeof menu.action_id === 'string' && menu.action_id.length > 255)
    return 'action_id too long';
  for (const o of options) {
    const text = isObj(o) && isObj(o.text) ? o.text : undefined;
    if (text?.type !== 'plain_text' || typeof text.text !== 'string' || !text.text)
      return 'option text must be plain_text';
    if (text.text.length > 75) return 'option text must be less than 76 characters';
    if (!isObj(o) || typeof o.value !== 'string' || o.value.length > 150)
      return 'option value must be at most 150 characters';
  }
  return undefined;
}

/** Slack gives every stored block a block_id, so blocks never read back byte-identical. */
export function withBlockIds(blocks: unknown[]): unknown[] {
  return blocks.map((b) =>
    isObj(b) && b.block_id === undefined
      ? { ...b, block_id: randomBytes(3).toString('base64url') }
      : b,
  );
}
