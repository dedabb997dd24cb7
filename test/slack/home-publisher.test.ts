import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebClient } from '@slack/web-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHomePublisher, type HomePublisher } from '../../src/slack/home.ts';
import { inBackground } from '../../src/store/pool-gate.ts';
import { workspaceScope } from '../../src/store/scope.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Store } from '../../src/store/types.ts';
import { FakeSlack } from '../fakes/slack.ts';
import { SECRETS } from '../helpers/harness.ts';
import { memoryLogger } from '../helpers/log.ts';
import { eventually, sleep } from '../helpers/net.ts';

/**
 * The App Home publisher against the fake Slack (a real WebClient, a real SQLite store):
 * views.publish is counted where Slack would count it.
 */
let slack: FakeSlack;
let store: Store;
let home: HomePublisher;
let dir: string;
const budget = { limit: 100, remaining: 100, nextSlotAt: null as number | null };
const logs = memoryLogger();

beforeEach(async () => {
  slack = await FakeSlack.start();
  dir = mkdtempSync(join(tmpdir(), 'home-pub-'));
  store = await openSqliteStore(join(dir, 'bot.sqlite'));
  const client = new WebClient(SECRETS.botToken, { slackApiUrl: slack.url });
  home = createHomePublisher({
    clientFor: async () => client,
    store,
    agentBudget: () => ({ status: async () => ({ ...budget }) }),
    defaultProjectId: 'proj_test',
    log: logs.log,
    debounceMs: 30,
    gapMs: 60,
  });
});
afterEach(async () => {
  home.stop();
  await store.close();
  await slack.close();
  rmSync(dir, { recursive: true, force: true });
  budget.remaining = 100;
});

const publishes = () => slack.callsTo('views.publish').filter((c) => c.status === 200);

describe('App Home publisher', () => {
  it('publishes a burst of refreshes once, and never a view the person already has', async () => {
    // 43 refreshes in bursts (one person's jobs edited again and again), nothing changing.
    for (let burst = 0; burst < 4; burst++) {
      for (let i = 0; i < 11; i++) home.refresh('T0001', 'U0001');
      await sleep(150);
    }
    await sleep(200);
    expect(publishes()).toHaveLength(1);
    // What the person sees changes (a use of the budget): published once.
    budget.remaining = 99;
    for (let i = 0; i < 5; i++) home.refresh('T0001', 'U0001');
    await eventually(() => publishes().length === 2, 'the changed view');
    await sleep(300);
    expect(publishes()).toHaveLength(2);
    expect(JSON.stringify(publishes()[1]?.args.view)).toContain('99 of 100 uses left');
    // Opening the tab publishes, changed or not; another person has their own view.
    await home.publish('T0001', 'U0001');
    home.refresh('T0001', 'U0002');
    await eventually(() => publishes().length === 4, 'the opening and the other person');
    expect(publishes().map((c) => c.args.user_id)).toEqual(['U0001', 'U0001', 'U0001', 'U0002']);
  });

  it("reads for a refresh as background work, and for a Home someone opened as a person's", async () => {
    const lanes: boolean[] = [];
    const marking = createHomePublisher({
      clientFor: async () => new WebClient(SECRETS.botToken, { slackApiUrl: slack.url }),
      store: {
        ...store,
        recentThreadsOf: (...args: Parameters<Store['recentThreadsOf']>) => {
          lanes.push(inBackground());
          return store.recentThreadsOf(...args);
        },
        lastReportHeadline: (scope) => store.lastReportHeadline(scope),
      },
      agentBudget: () => ({ status: async () => ({ ...budget }) }),
      defaultProjectId: 'proj_test',
      log: logs.log,
      debounceMs: 10,
      gapMs: 10,
    });
    try {
      await marking.publish('T0001', 'U0001');
      marking.refresh('T0001', 'U0002');
      await eventually(() => lanes.length === 2, 'the refresh');
      expect(lanes).toEqual([false, true]);
    } finally {
      marking.stop();
    }
  });

  it("gives a Grid user (one W… id in two teams) each team's Home, with that team's headline", async () => {
    const scoped = createHomePublisher({
      clientFor: async () => new WebClient(SECRETS.botToken, { slackApiUrl: slack.url }),
      store,
      agentBudget: () => ({ status: async () => ({ ...budget }) }),
      defaultProjectId: 'proj_test',
      log: logs.log,
      scope: workspaceScope,
      debounceMs: 30,
      gapMs: 60,
    });
    try {
      const headline = (total: number) => ({
        from: '2026-11-01',
        to: '2026-11-08',
        timeZone: 'UTC',
        totals: { human: total, ai: 0, total },
        previousTotals: { human: 1, ai: 0, total: 1 },
        partial: false,
        generatedAt: 1,
      });
      await store.putReportHeadline({ teamId: 'T0G1' }, headline(1111));
      await store.putReportHeadline({ teamId: 'T0G2' }, headline(2222));
      // Refreshes in both teams at once: neither is coalesced into the other's.
      scoped.refresh('T0G1', 'W0001', 'E0G');
      scoped.refresh('T0G2', 'W0001', 'E0G');
      await eventually(() => publishes().length === 2, "both teams' Homes");
      const views = publishes().map((c) => JSON.stringify(c.args.view));
      expect(views.filter((v) => v.includes('1,111'))).toHaveLength(1);
      expect(views.filter((v) => v.includes('2,222'))).toHaveLength(1);
    } finally {
      scoped.stop();
    }
  });

  it('publishes again after a failed publish, even when the view is the same', async () => {
    home.refresh('T0001', 'U0001');
    await eventually(() => publishes().length === 1, 'the first publish');
    slack.failNext('views.publish', { error: 'internal_error' });
    await home.publish('T0001', 'U0001');
    home.refresh('T0001', 'U0001');
    await eventually(() => publishes().length === 2, 'published again');
  });
});
