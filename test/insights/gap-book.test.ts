import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Conversation, SearchRow } from '../../src/api/insights-schemas.ts';
import { DEFAULT_INSIGHTS, questionGaps, searchGaps } from '../../src/insights/analyse.ts';
import { CLAIM_LAPSES_MS, createGapBook } from '../../src/insights/gap-book.ts';
import { joinGaps } from '../../src/insights/gaps.ts';
import type { InsightsReport } from '../../src/insights/report.ts';
import { SINGLE_WORKSPACE as WS } from '../../src/store/scope.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Store } from '../../src/store/types.ts';
import { unanswered } from '../helpers/insights.ts';
import { memoryLogger } from '../helpers/log.ts';

const DAY = 86_400_000;
let store: Store;
let dir: string;
let clock = Date.parse('2026-11-02T12:00:00Z');
const book = () =>
  createGapBook({
    store,
    defaultProjectId: 'proj_a',
    log: memoryLogger().log,
    now: () => clock,
  });

beforeEach(async () => {
  clock = Date.parse('2026-11-02T12:00:00Z');
  dir = mkdtempSync(join(tmpdir(), 'gap-book-'));
  store = await openSqliteStore(join(dir, 'bot.sqlite'));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const asked = (query: string, at: string, i = 0): Conversation =>
  unanswered(query, { id: `${query}-${at}-${i}`, timestamp: at });
const searched = (searchQuery: string, hits: number, last: string): SearchRow => ({
  searchQuery,
  hits,
  ctr: 0,
  topClickedPage: null,
  lastSearchedAt: last,
});

/** A week's report (from `from`, 7 days, UTC) with these questions and searches. */
function week(from: string, questions: Conversation[], rows: SearchRow[] = []): InsightsReport {
  const to = new Date(Date.parse(from) + 7 * DAY).toISOString().slice(0, 10);
  const all = { ...DEFAULT_INSIGHTS, topN: Number.POSITIVE_INFINITY };
  const gaps = joinGaps({
    questions: questionGaps(questions, Number.POSITIVE_INFINITY),
    searches: searchGaps(rows, all),
    rows,
    unanswered: questions,
    disliked: [],
    feedback: [],
  });
  return { range: { from, to, days: 7, timeZone: 'UTC' }, gaps } as unknown as InsightsReport;
}
const titles = (l: { content: { item: { title: string } }[] }) =>
  l.content.map((g) => g.item.title);

describe('the gap book', () => {
  it("keeps a gap's identity across weeks while its wordings drift, never merging another need", async () => {
    const b = book();
    const w1 = await b.resolve(
      WS,
      week('2026-10-19', [
        asked('How do I rotate API keys?', '2026-10-20T10:00:00Z'),
        asked('How do I rotate API keys?', '2026-10-21T10:00:00Z'),
        asked('webhook retry policy', '2026-10-21T11:00:00Z'),
      ]),
    );
    const rotate = w1.content.find((g) => g.item.title.includes('rotate'))!.id;
    // Next week readers say it differently: "rotating keys" (no "api"), then "key rotation schedule".
    const w2 = await b.resolve(
      WS,
      week('2026-10-26', [
        asked('rotating keys', '2026-10-27T10:00:00Z'),
        asked('rotating keys', '2026-10-28T10:00:00Z'),
        asked('How do I delete an API key?', '2026-10-28T11:00:00Z'),
      ]),
    );
    expect(w2.content.find((g) => g.item.title === 'rotating keys')?.id).toBe(rotate);
    const del = w2.content.find((g) => g.item.title.includes('delete'))!.id;
    expect(del).not.toBe(rotate);
    const w3 = await b.resolve(
      WS,
      week('2026-11-02', [asked('key rotation schedule', '2026-11-03T10:00:00Z')]),
    );
    // "key rotat schedu" shares 2 of 3 words with "key rotat", which the gap learnt in week 2.
    expect(w3.content[0]?.id).toBe(rotate);
    expect((await store.gapsOf(WS, 'proj_a', 10)).length).toBe(3); // rotate, webhook, delete
  });

  it('lists a drafted gap once, with "did it work?" counted from the pull request on', async () => {
    const b = book();
    const before = week(
      '2026-10-19',
      [1, 2, 3, 4].map((d) => asked('How do I rotate API keys?', `2026-10-2${d}T10:00:00Z`, d)),
      [searched('rotate api key', 40, '2026-10-25T00:00:00Z')],
    );
    const [gap] = (await b.resolve(WS, before)).content;
    expect(gap?.item).toMatchObject({ asked: 4, searched: 40 });
    expect(await b.claim(WS, gap!.id, 'view-1', 'U1')).toEqual({ outcome: 'new' });
    expect(await b.claim(WS, gap!.id, 'view-1', 'U1')).toEqual({ outcome: 'duplicate' });
    expect(await b.claim(WS, gap!.id, 'view-2', 'U2')).toMatchObject({
      outcome: 'taken',
      state: 'starting',
    });
    const thread = await store.createThread(
      { teamId: 'T', channelId: 'C', threadTs: '1.1', userId: 'U1', prompt: 'p', gapId: gap!.id },
      clock,
    );
    const prAt = Date.parse('2026-10-29T00:00:00Z');
    const snap = {
      jobId: 'j1',
      status: 'completed' as const,
      model: null,
      repository: null,
      ref: null,
      prLink: 'https://github.com/acme/docs/pull/3',
    };
    await store.attachJob(
      thread.id,
      { ...snap, status: 'active', prLink: null },
      { nextPollAt: 1, pollIntervalMs: 1 },
      clock,
    );
    await store.recordPoll({
      threadId: thread.id,
      round: 0,
      snapshot: snap,
      schedule: { nextPollAt: null, pollIntervalMs: 1 },
      announcements: [],
      now: prAt,
    });
    // The week the PR opened in: 2 questions before it, 1 after; searches not split.
    const straddling = week(
      '2026-10-26',
      [
        asked('How do I rotate API keys?', '2026-10-27T10:00:00Z', 1),
        asked('rotate api keys', '2026-10-28T10:00:00Z', 2),
        asked('How do I rotate API keys?', '2026-10-30T10:00:00Z', 3),
      ],
      [searched('rotate api key', 12, '2026-10-31T00:00:00Z')],
    );
    const listing = await b.resolve(WS, straddling);
    expect(titles(listing)).toEqual([]);
    expect(listing.drafted).toHaveLength(1);
    expect(listing.drafted[0]).toMatchObject({ id: gap!.id, state: 'done', by: 'U1' });
    expect(listing.drafted[0]?.impact).toEqual({
      prAt,
      before: { asked: 4, searched: 40, from: '2026-10-19', to: '2026-10-26', days: 7 },
      since: { from: prAt, days: 4, asked: 1, askedAtLeast: false, searched: null },
    });
    // The week after: nobody asked; the search gap is gone too.
    const after = await b.resolve(
      WS,
      week('2026-11-02', [asked('webhook retries', '2026-11-03T10:00:00Z')]),
    );
    expect(after.drafted[0]?.impact?.since).toMatchObject({ asked: 0, searched: 0, days: 7 });
    expect(await b.claim(WS, gap!.id, 'view-3', 'U3')).toMatchObject({
      outcome: 'taken',
      state: 'done',
    });
  });

  it('opens a gap again when its job ended without a pull request, or its start never recorded one', async () => {
    const b = book();
    const report = week('2026-10-19', [asked('How do I rotate API keys?', '2026-10-20T10:00:00Z')]);
    const [gap] = (await b.resolve(WS, report)).content;
    await b.claim(WS, gap!.id, 'view-1', 'U1');
    expect((await b.resolve(WS, report)).content).toHaveLength(0);
    clock += CLAIM_LAPSES_MS + 1;
    const lapsed = await b.resolve(WS, report);
    expect(lapsed.content[0]).toMatchObject({ id: gap!.id, again: true });
    expect(await b.claim(WS, gap!.id, 'view-2', 'U2')).toEqual({ outcome: 'new' });
    const t = await store.createThread(
      { teamId: 'T', channelId: 'C', threadTs: '2.1', userId: 'U2', prompt: 'p', gapId: gap!.id },
      clock,
    );
    expect((await b.resolve(WS, report)).drafted[0]).toMatchObject({ state: 'running' });
    await store.startFailed(t.id, 'the agent API refused', clock);
    expect((await b.resolve(WS, report)).content[0]).toMatchObject({ id: gap!.id, again: true });
    expect(await b.dismiss(WS, gap!.id, 'U3')).toEqual({ outcome: 'dismissed' });
    const gone = await b.resolve(WS, report);
    expect(gone.content).toHaveLength(0);
    expect(gone.dismissed).toBe(1);
  });
});
