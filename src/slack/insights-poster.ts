import type { KnownBlock } from '@slack/types';
import type { WebClient } from '@slack/web-api';
import type { InsightsPoster } from '../insights/ports.ts';
import type { InsightsReport } from '../insights/service.ts';
import type { Logger } from '../log.ts';
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
      const message = insightsMessage(report, view, {
        ...(opts.title ? { title: opts.title } : {}),
        topSearches: !opts.section,
      });
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
