import type { KnownBlock } from '@slack/types';
import type { WebClient } from '@slack/web-api';
import { NOT_IN_CHANNEL_CODES } from '../chat-errors.ts';
import type { InsightsPoster } from '../insights/ports.ts';
import type { InsightsReport } from '../insights/service.ts';
import type { Logger } from '../log.ts';
import { toChatError } from './chat.ts';
import { historyHas, markedWith } from './history.ts';
import { type InsightsView, insightsMessage } from './insights-blocks.ts';

/** Marks an insights report's message (and a digest's note in its place). */
export const INSIGHTS_EVENT = 'docs_insights_report';
/** Refusals a plain message would get too: no point in falling back. */
const CANNOT_POST = new Set([...NOT_IN_CHANNEL_CODES, 'is_archived', 'invalid_auth']);

/**
 * Posts insights reports: the blocks with their plain `text`; if Slack refuses the blocks
 * (and would take a plain message), the text alone goes out, so the summary is not lost.
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
  ): Promise<void> {
    const base = {
      channel,
      text,
      unfurl_links: false,
      unfurl_media: false,
      metadata: { event_type: INSIGHTS_EVENT, event_payload: payload },
    };
    if (blocks) {
      try {
        await client.chat.postMessage({ ...base, blocks });
        return;
      } catch (err) {
        const e = toChatError(err);
        // Not answered: the blocks may have been posted; a second message could repeat them.
        if (!e.answered || CANNOT_POST.has(e.code)) throw e;
        log.warn({ err: e, channelId: channel }, 'insights.blocks_refused');
      }
    }
    try {
      await client.chat.postMessage(base);
    } catch (err) {
      throw toChatError(err);
    }
  }

  return {
    async post(channelId, report: InsightsReport, opts = {}) {
      const message = insightsMessage(report, view, {
        ...(opts.title ? { title: opts.title } : {}),
        topSearches: !opts.section,
      });
      const payload = { from: report.range.from, ...(opts.key ? { key: opts.key } : {}) };
      await send(channelId, message.text, message.blocks, payload);
    },

    async postUnavailable(channelId, text, { key }) {
      await send(channelId, text, undefined, { key });
    },

    has(channelId, key, sinceMs) {
      return historyHas(
        client,
        channelId,
        sinceMs,
        (m) => markedWith(m, INSIGHTS_EVENT)?.key === key,
      );
    },
  };
}
