/**
 * What the bot posted, as plain text a person reads in a terminal: each channel's messages in
 * order, thread replies indented under their root, Block Kit flattened (sections, context,
 * buttons as [Label], images by their alt text), mrkdwn links and mentions made readable.
 * `GET /messages` keeps the raw JSON for scripts; this is `GET /transcript` and what
 * `npm run try` prints when it stops.
 */
import type { FakeSlack, StoredMessage } from '../../test/fakes/slack.ts';

type Block = Record<string, unknown>;

export function transcript(slack: FakeSlack, channels = slack.channels()): string {
  const parts = channels
    .map((channel) => ({ channel, messages: slack.history(channel) }))
    .filter((c) => c.messages.length > 0)
    .map(({ channel, messages }) => [`#${channel}`, ...messages.map(render)].join('\n'));
  return parts.length > 0 ? `${parts.join('\n\n')}\n` : '(nothing posted)\n';
}

function render(m: StoredMessage): string {
  const reply = m.thread_ts !== undefined && m.thread_ts !== m.ts;
  const who = m.bot_id ? 'Docs Agent' : `@${m.user}`;
  const time = new Date(Number(m.ts) * 1000).toISOString().slice(11, 19);
  const body = (Array.isArray(m.blocks) ? blockLines(m.blocks) : []).filter((l) => l.trim() !== '');
  const lines = body.length > 0 ? body : readable(m.text).split('\n');
  const reactions = m.reactions.map((r) => `:${r.name}:`).join(' ');
  const indent = reply ? '    ↳ ' : '  ';
  const cont = reply ? '      ' : '    ';
  const edited = m.edited ? ' (edited)' : '';
  return [
    `${indent}${time} ${who}${edited}${reactions ? `  ${reactions}` : ''}`,
    ...lines.map((l) => `${cont}${l}`),
  ].join('\n');
}

function blockLines(blocks: unknown[]): string[] {
  return (blocks as Block[]).flatMap((b): string[] => {
    switch (b.type) {
      case 'header':
        return [textOf(b.text).toUpperCase()];
      case 'section':
        return [
          ...readable(textOf(b.text)).split('\n'),
          ...(Array.isArray(b.fields) ? b.fields.map((f) => readable(textOf(f))) : []),
          ...(isObj(b.accessory) ? elementLines([b.accessory]) : []),
        ];
      case 'context':
        return [
          Array.isArray(b.elements)
            ? (b.elements as Block[])
                .map((e) => readable(e.type === 'image' ? '' : textOf(e)))
                .filter(Boolean)
                .join(' · ')
            : '',
        ];
      case 'actions':
        return elementLines(Array.isArray(b.elements) ? b.elements : []);
      case 'image':
        return [`(image: ${String(b.alt_text ?? 'chart')})`];
      case 'divider':
        return ['───'];
      case 'rich_text':
        return [readable(richText(b))];
      default:
        return [];
    }
  });
}

function elementLines(elements: unknown[]): string[] {
  const labels = (elements as Block[]).flatMap((e) =>
    e.type === 'button'
      ? [`[${textOf(e.text)}]`]
      : e.type === 'overflow'
        ? ['[⋯]']
        : e.type === 'image'
          ? []
          : [`[${String(e.type)}]`],
  );
  return labels.length > 0 ? [labels.join(' ')] : [];
}

function richText(b: Block): string {
  const walk = (v: unknown): string =>
    Array.isArray(v)
      ? v.map(walk).join('')
      : isObj(v)
        ? typeof v.text === 'string'
          ? v.text
          : typeof v.url === 'string'
            ? v.url
            : walk(v.elements)
        : '';
  return walk(b.elements);
}

function textOf(t: unknown): string {
  return isObj(t) && typeof t.text === 'string' ? t.text : typeof t === 'string' ? t : '';
}

/** mrkdwn as a person reads it: `<url|label>` → label (url), `<@U1>` → @U1, entities decoded. */
export function readable(text: string): string {
  return text
    .replace(/<([^<>|]+)\|([^<>]+)>/g, (_, url: string, label: string) =>
      /^[@#!]/.test(url) || url === label ? label : `${label} (${url})`,
    )
    .replace(/<[@#]([A-Z0-9]+)>/g, (_, id: string) => `@${id}`)
    .replace(/<!([a-z]+)[^>]*>/g, '@$1')
    .replace(/<([^<>]+)>/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

const isObj = (v: unknown): v is Block => typeof v === 'object' && v !== null && !Array.isArray(v);
