import type { KnownBlock } from '@slack/types';
import type { WebClient } from '@slack/web-api';
import type { GapListing } from '../insights/gap-book.ts';
import type { InsightsPoster } from '../insights/ports.ts';
import type { InsightsReport } from '../insights/service.ts';
import type { Logger } from '../log.ts';
import { toChatError } from './chat.ts';
import { type HistoryMessage, historyHas, markedWith, threadHas } from './history.ts';
import { type InsightsView, insightsMessage } from './insights-blocks.ts';
import { postMarked } from './marked-message.ts';

/** Marks an insights report's message (and a digest's note in its place). */
export const INSIGHTS_EVENT = 'docs_insights_report';

/**
 * Posts insights reports (marked-message.ts: the blocks with their plain `text`, the text
 * alone if Slack refuses the blocks), and recognises them in the channel later.
 */
export function createSlackInsightsPoster(
  client: WebClient,
  log: Logger,
  view: InsightsView,
): InsightsPoster {
  async function send(
    channel: string,
    text: string,
    blocks: KnownBlock[] | undefined,
    payload: Record<string, string>,
    threadTs: string | undefined,
  ): Promise<void> {
    const metadata = { event_type: INSIGHTS_EVENT, event_payload: payload };
    await postMarked(client, log, {
      channel,
      threadTs,
      text,
      blocks,
      metadata,
      refusedEvent: 'insights.blocks_refused',
    });
  }

  return {
    async post(channelId, report: InsightsReport, opts = {}) {
      const shape = { ...(opts.title ? { title: opts.title } : {}), topSearches: !opts.section };
      const message = opts.gaps
        ? insightsMessage(report, view, shape, {
            listing: opts.gaps,
            threadLinks: await threadLinks(client, opts.gaps, log),
          })
        : insightsMessage(report, view, shape);
      const payload = { from: report.range.from, ...(opts.key ? { key: opts.key } : {}) };
      await send(channelId, message.text, message.blocks, payload, opts.threadTs);
    },

    async postUnavailable(channelId, text, { key, threadTs }) {
      await send(channelId, text, undefined, { key }, threadTs);
    },

    async has(channelId, key, sinceMs, threadTs) {
      const wanted = (m: HistoryMessage) => markedWith(m, INSIGHTS_EVENT)?.key === key;
      // In the thread, or in the channel: a run that never saw the report's message (Slack
      // did not show where it shared the chart) posted the section there.
      if (threadTs && (await threadHas(client, channelId, threadTs, wanted))) return true;
      return historyHas(client, channelId, sinceMs, wanted);
    },
  };
}

/**
 * Links to the job threads of the drafted gaps a report shows (one `chat.getPermalink` each,
 * at most five); a job whose link Slack does not give is shown without one.
 */
async function threadLinks(
  client: WebClient,
  listing: GapListing,
  log: Logger,
): Promise<Map<number, string>> {
  const links = new Map<number, string>();
  for (const d of listing.drafted) {
    const job = d.job;
    if (!job || job.rootTs.startsWith('pending:')) continue;
    try {
      const res = await client.chat.getPermalink({
        channel: job.channelId,
        message_ts: job.rootTs,
      });
      if (res.permalink) links.set(job.id, res.permalink);
    } catch (err) {
      log.warn({ err: toChatError(err), threadId: job.id }, 'insights.no_thread_link');
    }
  }
  return links;
}
