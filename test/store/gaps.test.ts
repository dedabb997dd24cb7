import { expect, it } from 'vitest';
import { GAP_KEEP_MS } from '../../src/store/gaps.ts';
import { SINGLE_WORKSPACE as WS } from '../../src/store/scope.ts';
import type { NewGap } from '../../src/store/types.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';
import { poll, snap, thread } from './fixtures.ts';

const gap = (key: string, over: Partial<NewGap> = {}): NewGap => ({
  projectId: 'proj_a',
  key,
  kind: 'question',
  signatures: [key],
  title: `about ${key}`,
  evidence: `{"k":"${key}"}`,
  evidenceTo: '2026-11-08',
  ...over,
});
const open = { state: 'open', claimToken: null } as const;

describeEachEngine('store: insight gaps', (db) => {
  it('records a gap once per project and key, in the order asked, and lists the latest seen first', async () => {
    const [a, b] = await db.store.addGaps(WS, [gap('api key rotat'), gap('okta sso')], 1000);
    expect(a).toMatchObject({ key: 'api key rotat', state: 'open', signatures: ['api key rotat'] });
    expect(b?.id).not.toBe(a?.id);
    // The same key again (another report at the same moment) answers the same row.
    const [again, other] = await db.store.addGaps(
      WS,
      [gap('api key rotat', { title: 'changed' }), gap('api key rotat', { projectId: 'proj_b' })],
      2000,
    );
    expect(again).toMatchObject({ id: a!.id, title: 'about api key rotat', createdAt: 1000 });
    expect(other?.id).not.toBe(a!.id);
    await db.store.sawGaps(
      WS,
      [
        {
          id: a!.id,
          signatures: ['api key rotat', 'key rotat'],
          title: 'newer',
          evidence: '{"new":1}',
          evidenceTo: '2026-11-15',
        },
      ],
      3000,
    );
    const listed = await db.store.gapsOf(WS, 'proj_a', 10);
    expect(listed.map((g) => g.key)).toEqual(['api key rotat', 'okta sso']);
    expect(listed[0]).toMatchObject({
      signatures: ['api key rotat', 'key rotat'],
      title: 'newer',
      evidenceTo: '2026-11-15',
      lastSeenAt: 3000,
    });
    // A listing reads no evidence; a click does.
    expect(listed[0]).not.toHaveProperty('evidence');
    expect((await db.store.gapWithThread(WS, a!.id))?.gap.evidence).toBe('{"new":1}');
    // An older period asked again moves "last seen" but keeps the later evidence.
    await db.store.sawGaps(
      WS,
      [{ id: a!.id, signatures: ['x'], title: 'old', evidence: '{}', evidenceTo: '2026-10-01' }],
      4000,
    );
    expect((await db.store.gapsOf(WS, 'proj_a', 1))[0]).toMatchObject({
      title: 'newer',
      evidenceTo: '2026-11-15',
      lastSeenAt: 4000,
    });
  });

  it('lets one of two claims at once win, recognises its token, and dismisses by compare-and-set', async () => {
    const [g] = await db.store.addGaps(WS, [gap('k')], 0);
    const other = await db.another();
    const claim = (token: string) => ({ token, userId: 'U1', before: '{"asked":3}', now: 5 });
    const won = await Promise.all([
      db.store.claimGap(WS, g!.id, open, claim('view-1')),
      other.claimGap(WS, g!.id, open, claim('view-2')),
    ]);
    expect(won.filter(Boolean)).toHaveLength(1);
    const { gap: drafted } = (await db.store.gapWithThread(WS, g!.id))!;
    expect(drafted).toMatchObject({ state: 'drafted', claimedBy: 'U1', before: '{"asked":3}' });
    expect(drafted.claimToken).toBe(won[0] ? 'view-1' : 'view-2');
    // Dismissing what it no longer is changes nothing; as it is now, it does.
    expect(await db.store.dismissGap(WS, g!.id, open, 'U2', 6)).toBe(false);
    const now = { state: 'drafted', claimToken: drafted.claimToken } as const;
    expect(await db.store.dismissGap(WS, g!.id, now, 'U2', 6)).toBe(true);
    expect((await db.store.gapWithThread(WS, g!.id))?.gap).toMatchObject({
      state: 'dismissed',
      dismissedBy: 'U2',
      dismissedAt: 6,
    });
    // Drafting a dismissed gap takes it back (a person asked for it).
    const dismissed = { state: 'dismissed', claimToken: drafted.claimToken } as const;
    expect(await db.store.claimGap(WS, g!.id, dismissed, claim('view-3'))).toBe(true);
    expect(await db.store.gapWithThread(WS, 404)).toBeUndefined();
  });

  it("finds a gap's job (its latest thread) and stamps when that job's pull request appears", async () => {
    const [g, h] = await db.store.addGaps(WS, [gap('k'), gap('j')], 0);
    await db.store.claimGap(WS, g!.id, open, { token: 'v', userId: 'U1', before: '{}', now: 1 });
    const first = await db.store.createThread({ ...thread, gapId: g!.id }, 10);
    const second = await db.store.createThread({ ...thread, threadTs: '100.2', gapId: g!.id }, 20);
    await db.store.createThread({ ...thread, threadTs: '100.3' }, 30);
    expect(first.gapId).toBe(g!.id);
    expect((await db.store.gapWithThread(WS, g!.id))?.thread?.id).toBe(second.id);
    expect((await db.store.gapWithThread(WS, h!.id))?.thread).toBeUndefined();
    const threads = await db.store.gapThreads(WS, [g!.id, h!.id]);
    expect([...threads.keys()]).toEqual([g!.id]);
    expect(threads.get(g!.id)?.id).toBe(second.id);
    expect((await db.store.gapThreads(WS, [])).size).toBe(0);

    const schedule = { nextPollAt: 50, pollIntervalMs: 1 };
    await db.store.attachJob(second.id, snap(), schedule, 40);
    await db.store.recordPoll(poll({ threadId: second.id, snapshot: snap(), now: 50 }));
    expect((await db.store.gapWithThread(WS, g!.id))?.gap.prAt).toBeNull();
    const pr = snap({ status: 'completed', prLink: 'https://github.com/acme/docs/pull/1' });
    await db.store.recordPoll(poll({ threadId: second.id, snapshot: pr, now: 60 }));
    await db.store.recordPoll(poll({ threadId: second.id, snapshot: pr, now: 70 }));
    expect((await db.store.gapWithThread(WS, g!.id))?.gap.prAt).toBe(60);
  });

  it('forgets open gaps unlisted for half a year, never drafted or dismissed ones', async () => {
    const [old, drafted, dismissed] = await db.store.addGaps(WS, [gap('a'), gap('b'), gap('c')], 0);
    await db.store.claimGap(WS, drafted!.id, open, {
      token: 't',
      userId: 'U',
      before: '{}',
      now: 0,
    });
    await db.store.dismissGap(WS, dismissed!.id, open, 'U', 0);
    await db.store.addGaps(WS, [gap('d')], GAP_KEEP_MS + 1);
    const keys = (await db.store.gapsOf(WS, 'proj_a', 10)).map((g) => g.key).sort();
    expect(keys).toEqual(['b', 'c', 'd']);
    expect(old).toBeDefined();
  });
});
