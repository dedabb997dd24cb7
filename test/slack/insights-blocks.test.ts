import { describe, expect, it } from 'vitest';
import { SOURCES } from '../../src/insights/plan.ts';
import type { InsightsReport } from '../../src/insights/service.ts';
import type { Topic } from '../../src/insights/topics.ts';
import { BUTTON_VALUE_MAX, decodeSeed, draftPrompt } from '../../src/slack/insight-drafts.ts';
import { insightsMessage } from '../../src/slack/insights-blocks.ts';
import { slackLimitProblems } from '../helpers/slack-limits.ts';

const HOSTILE = [
  '<!channel> please <https://evil.example|click>',
  '&'.repeat(2_500),
  `How do I ${'really '.repeat(800)}rotate keys?`,
  'emoji 🔑'.repeat(300),
];
const range = { from: '2026-11-01', to: '2026-11-08', timeZone: 'UTC' };
const previous = { from: '2026-10-25', to: '2026-11-01', timeZone: 'UTC' };

function topic(i: number): Topic {
  const text = HOSTILE[i % HOSTILE.length]!;
  return {
    key: `k${i}`,
    words: ['k'],
    count: 10 + i,
    example: text,
    variants: [
      { text, count: 5 },
      { text: `${text}?`, count: 5 + i },
    ],
    lastAt: undefined,
  };
}

function hostileReport(): InsightsReport {
  const per = (v: number) =>
    Object.fromEntries(SOURCES.map((s) => [s, v])) as Record<never, number>;
  const topics = Array.from({ length: 5 }, (_, i) => topic(i));
  return {
    range,
    previous,
    project: undefined,
    questionGaps: topics,
    searchGaps: topics.map((t, i) => ({
      topic: t,
      hits: 20 + i,
      ctr: 0.01,
      noClicks: i % 2 === 0,
    })),
    moreGaps: { questions: 1, searches: 12 },
    disliked: Array.from({ length: 5 }, (_, i) => ({
      path: `/p/${i}/${'&'.repeat(300)}<!channel>|x`,
      thumbsDown: 9 - i,
      thumbsUp: 1,
      downShare: 0.9,
      comments: HOSTILE.map((text, j) => ({ text, at: null, count: j === 0 ? 3 : 1 })),
    })),
    topSearches: Array.from({ length: 5 }, (_, i) => ({
      searchQuery: HOSTILE[i % HOSTILE.length]!,
      hits: 100 - i,
      ctr: 0.5,
      topClickedPage: `/q/${'&'.repeat(400)}`,
      lastSearchedAt: '2026-11-07T00:00:00Z',
    })),
    counts: { searches: 1000, questions: null, unanswered: null, thumbsDown: 30 },
    feedbackPagesCut: true,
    previousCounts: { searches: 900, questions: null, unanswered: null, thumbsDown: 20 },
    changes: {
      searches: { current: 1000, previous: 900, abs: 100, pct: 11.1 },
      thumbsDown: { current: 30, previous: 20, abs: 10, pct: 50 },
    },
    plan: {
      pages: per(1),
      wanted: per(3),
      total: 7,
      allowance: 7,
      cap: 7,
      budgetLeft: 7,
      limitedBy: 'budget',
      previousCached: false,
    },
    coverage: Object.fromEntries(
      SOURCES.map((s) => [s, { planned: 1, pages: 1, complete: false }]),
    ) as InsightsReport['coverage'],
    requests: 7,
    stoppedBy: 'budget',
    closed: true,
    generatedAt: 0,
  } as InsightsReport;
}

describe('insightsMessage', () => {
  for (const drafts of [false, true]) {
    it(`stays within Slack's limits with hostile text, escaped (drafts: ${drafts})`, () => {
      const message = insightsMessage(hostileReport(), {
        docsBaseUrl: 'https://docs.acme.com',
        drafts,
      });
      expect(slackLimitProblems(message)).toEqual([]);
      // What Slack shows (a button's value is data it never renders).
      const json = JSON.stringify(message.blocks, (k, v) => (k === 'value' ? undefined : v));
      expect(json).not.toContain('<!channel>');
      expect(json).not.toContain('<https://evil');
      expect(json).toContain('&lt;!channel&gt;');
      expect(json).toContain('Stopped early because the analytics budget');
      expect(json).toContain('not read in full');
      expect(json).toContain(
        '…and 1 more unanswered question topic and 12 more search topics, each asked or searched less often, not listed.',
      );
      expect(json).toContain('_(3 readers)_');
      const buttons = message.blocks.flatMap((b) =>
        'accessory' in b && b.accessory?.type === 'button' ? [b.accessory] : [],
      );
      expect(buttons).toHaveLength(drafts ? 15 : 0);
      for (const b of buttons) {
        expect(b.value!.length).toBeLessThanOrEqual(BUTTON_VALUE_MAX);
        expect(b.action_id!.length).toBeLessThanOrEqual(255);
        const seed = decodeSeed(b.value!);
        expect(seed).toBeDefined();
        expect(draftPrompt(seed!).length).toBeGreaterThan(20);
      }
    });
  }

  it("leaves top searches out of the digest's section, under its own title", () => {
    const message = insightsMessage(
      hostileReport(),
      { drafts: true },
      { title: 'Weekly docs insights', topSearches: false },
    );
    expect(slackLimitProblems(message)).toEqual([]);
    expect(message.text).toMatch(/^Weekly docs insights: /);
    const json = JSON.stringify(message.blocks);
    expect(json).toContain('Weekly docs insights: ');
    expect(json).toContain('Content gaps');
    expect(json).toContain('Pages readers disliked');
    expect(json).not.toContain('Top searches');
  });

  it('says plainly when there is nothing to show', () => {
    const empty = {
      ...hostileReport(),
      questionGaps: [],
      searchGaps: [],
      disliked: [],
      topSearches: [],
    };
    const message = insightsMessage(empty);
    expect(slackLimitProblems(message)).toEqual([]);
    const json = JSON.stringify(message.blocks);
    expect(json).toContain('No unanswered questions');
    expect(json).toContain('No page had enough thumbs down');
    expect(json).toContain('No searches in this period.');
    expect(message.text).toContain('0 content gaps');
  });
});
