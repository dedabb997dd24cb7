import { describe, expect, it } from 'vitest';
import type { GapListing } from '../../src/insights/gap-book.ts';
import type { GapItem } from '../../src/insights/gaps.ts';
import { SOURCES } from '../../src/insights/plan.ts';
import type { InsightsReport } from '../../src/insights/service.ts';
import type { Topic } from '../../src/insights/topics.ts';
import { readChoice } from '../../src/slack/gap-blocks.ts';
import { insightsMessage, plainListing } from '../../src/slack/insights-blocks.ts';
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

function item(i: number, kind: GapItem['kind'] = 'question'): GapItem {
  const text = HOSTILE[i % HOSTILE.length]!;
  const path = `/p/${i}/${'&'.repeat(300)}<!channel>|x`;
  return {
    kind,
    key: kind === 'page' ? `page:${path}` : `k${i}`,
    signatures: [`k${i}`],
    title: kind === 'page' ? path : text,
    asked: kind === 'question' ? 10 + i : 0,
    searched: 20 + i,
    ctr: i % 2 ? 0.01 : 0,
    page: kind === 'page' ? { path, thumbsDown: 9 - i, thumbsUp: 1, downShare: 0.9 } : null,
    wordings: [
      { text, count: 5 },
      { text: `${text}?`, count: 5 + i },
    ],
    searches: [{ text, hits: 20 + i, ctr: 0 }],
    pages: [{ path, count: 3 }],
    comments: HOSTILE.map((t, j) => ({ path, text: t, count: j === 0 ? 3 : 1 })),
    distinct: { wordings: 12, searches: 3, comments: 4, pages: 1 },
    askedAt: [],
    searchedLastAt: null,
    weight: 100 - i,
    lastAt: null,
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
    gaps: [
      ...Array.from({ length: 8 }, (_, i) => item(i, i % 2 ? 'search' : 'question')),
      ...Array.from({ length: 6 }, (_, i) => item(i, 'page')),
    ],
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

/** The hostile report's gaps as kept: ids, one drafted with a pull request, one dismissed. */
function keptListing(report: InsightsReport): GapListing {
  const plain = plainListing(report);
  const ids = (gs: GapListing['content'], from: number) =>
    gs.map((g, i) => ({ ...g, id: from + i, again: i === 1 }));
  return {
    ...plain,
    content: ids(plain.content, 1),
    pages: ids(plain.pages, 100),
    drafted: [
      {
        id: 50,
        title: HOSTILE[0]!,
        kind: 'question',
        state: 'done',
        by: 'U1',
        at: 0,
        job: {
          id: 7,
          channelId: 'C1',
          rootTs: '1.2',
          prLink: 'https://github.com/acme/docs/pull/9',
        } as never,
        item: undefined,
        impact: {
          prAt: Date.parse('2026-11-03T00:00:00Z'),
          before: { asked: 14, searched: 40, from: '2026-10-20', to: '2026-11-03', days: 14 },
          since: {
            from: Date.parse('2026-11-03T00:00:00Z'),
            days: 5,
            asked: 3,
            askedAtLeast: false,
            searched: null,
          },
        },
      },
    ],
    dismissed: 2,
  };
}

describe('insightsMessage', () => {
  for (const drafts of [false, true]) {
    it(`stays within Slack's limits with hostile text, escaped, one menu per gap (drafts: ${drafts})`, () => {
      const report = hostileReport();
      const listing = keptListing(report);
      const message = insightsMessage(
        report,
        { docsBaseUrl: 'https://docs.acme.com', drafts },
        {},
        { listing, threadLinks: new Map([[7, 'https://acme.slack.com/archives/C1/p12']]) },
      );
      expect(slackLimitProblems(message)).toEqual([]);
      const json = JSON.stringify(message.blocks);
      expect(json).not.toContain('<!channel>');
      expect(json).not.toContain('<https://evil');
      expect(json).toContain('&lt;!channel&gt;');
      expect(json).toContain('Stopped early because the analytics budget');
      expect(json).toContain('not read in full');
      expect(json).toContain(
        '…and 3 more gaps, none met by more readers than those listed, not listed. 2 gaps someone dismissed are left out.',
      );
      expect(json).toContain('_(3 readers)_');
      expect(json).toContain('An earlier job for it ended without a pull request.');
      expect(json).toContain('<https://acme.slack.com/archives/C1/p12|job thread>');
      expect(json).toContain('<https://github.com/acme/docs/pull/9|pull request acme/docs#9>');
      expect(json).toContain(
        'Since the pull request (Nov 3): asked 3× unanswered, searches not split at the pull request, in 5 days. Before: asked 14×, searched 40× without a click in 14 days.',
      );
      // No wall of buttons: one menu (⋯) per open gap, its options within Slack's limits.
      const accessories = message.blocks.flatMap((b) =>
        'accessory' in b && b.accessory ? [b.accessory] : [],
      );
      expect(accessories.every((a) => a.type === 'overflow')).toBe(true);
      expect(accessories).toHaveLength(drafts ? 10 : 0);
      for (const a of accessories) {
        if (a.type !== 'overflow') continue;
        expect(a.options.length).toBeLessThanOrEqual(5);
        for (const o of a.options) {
          expect(o.value!.length).toBeLessThanOrEqual(150);
          expect(readChoice(o.value!)).toBeDefined();
        }
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
    // Listed plainly (no gap state): no menus.
    expect(json).not.toContain('overflow');
  });

  it('says plainly when there is nothing to show', () => {
    const empty = {
      ...hostileReport(),
      questionGaps: [],
      searchGaps: [],
      disliked: [],
      gaps: [],
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
