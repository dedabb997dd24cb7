import type { FakeSlack, StoredMessage } from '../fakes/slack.ts';

/**
 * How a traffic report looks in a channel: one top-level message (the chart with the
 * headline as its comment, or the marked headline alone when the chart failed), with the
 * details, the CSV and, for the digest, the insights section in its thread.
 */

const fileNames = (m: StoredMessage) => (m.files ?? []).map((f) => String(f.name));

/** The messages people see in the channel itself: thread replies are not among them. */
export const topLevel = (slack: FakeSlack, channel: string) =>
  slack.history(channel).filter((m) => !m.thread_ts || m.thread_ts === m.ts);

/** Report headlines in the channel: the chart's message, or the marked one posted without it. */
export const reportHeadlines = (slack: FakeSlack, channel: string) =>
  topLevel(slack, channel).filter(
    (m) =>
      fileNames(m).some((n) => /^docs-traffic-.*\.png$/.test(n)) ||
      m.metadata?.event_type === 'docs_traffic_report',
  );

/** The replies in a message's thread, in posting order (the message itself left out). */
export const threadOf = (slack: FakeSlack, channel: string, ts: string) =>
  slack.thread(channel, ts).filter((m) => m.ts !== ts);

/** The details reply of a report (top pages, movers, footnotes), marked as such. */
export const isDetails = (m: StoredMessage) => m.metadata?.event_type === 'docs_traffic_details';
/** A reply carrying the report's CSV. */
export const isCsv = (m: StoredMessage) => fileNames(m).some((n) => n.endsWith('.csv'));

/** The gaps an insights report lists with a menu: each one's id and text, in order. */
export function listedGaps(m: StoredMessage | undefined): { id: number; text: string }[] {
  type B = { block_id?: string; text?: { text?: string }; accessory?: { type?: string } };
  return (m?.blocks ?? []).flatMap((raw) => {
    const b = raw as B;
    const id = /^gap_(\d+)$/.exec(b.block_id ?? '')?.[1];
    return id && b.accessory?.type === 'overflow'
      ? [{ id: Number(id), text: b.text?.text ?? '' }]
      : [];
  });
}

/** The id of the listed gap whose text matches. */
export function gapId(m: StoredMessage | undefined, match: (text: string) => boolean): number {
  const found = listedGaps(m).find((g) => match(g.text));
  if (!found) throw new Error(`no listed gap matches in ${JSON.stringify(listedGaps(m))}`);
  return found.id;
}
