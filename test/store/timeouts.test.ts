import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreTimeout, storeWithDeadline } from '../../src/store/deadline.ts';
import { openPostgresStore } from '../../src/store/postgres.ts';
import type { Store } from '../../src/store/types.ts';
import { TcpProxy } from '../fakes/tcp-proxy.ts';
import { memoryLogger } from '../helpers/log.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres.ts';

/** PostgreSQL reached through the proxy, which black-holes the link on demand. */
describe.skipIf(!postgresAvailable)('store: a PostgreSQL server that stops answering', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let store: Store | undefined;
  const mem = memoryLogger();
  const open = async (timeoutMs: number) => {
    store = await openPostgresStore(proxy.rewrite(database.url), { log: mem.log, timeoutMs });
    return store;
  };
  beforeEach(async () => {
    database = await createTestDatabase();
    const u = new URL(database.url);
    proxy = await TcpProxy.start({ host: u.hostname, port: Number(u.port || 5432) });
  });
  afterEach(async () => {
    await proxy.close();
    await store?.close();
    await database.drop();
  });

  it('fails a query with no answer as a StoreTimeout, and replaces the connection it hung on', async () => {
    const s = await open(500);
    await s.ping();
    proxy.blackhole();
    await expect(s.ping()).rejects.toBeInstanceOf(StoreTimeout);
    // A failover: the connection the query hung on stays dead; a new one answers.
    proxy.heal({ strand: true });
    // Each connection the outage left dead fails one query, then is gone.
    await eventually(
      () =>
        s.ping().then(
          () => true,
          () => false,
        ),
      'a ping to answer after the heal',
      10_000,
    );
    expect(mem.text()).toContain('store.query_unanswered');
  });

  it('closes while a query hangs, cutting the connections after a short wait', async () => {
    const s = await open(60_000); // the query alone would wait 61 s
    await s.ping();
    proxy.blackhole();
    const hung = s.ping().catch((err: unknown) => err);
    await sleep(100); // the query is on its way
    await s.close();
    store = undefined;
    expect(await hung).toBeInstanceOf(Error);
    expect(mem.text()).toContain('store.close_cut');
  });

  it('gives a background loop a StoreTimeout when its call does not answer in time', async () => {
    const s = await open(60_000);
    const outcomes: string[] = [];
    const bounded = storeWithDeadline(s, 300, (o) => outcomes.push(o));
    expect(await bounded.store.nextDueAt()).toBeNull();
    proxy.blackhole();
    await expect(bounded.store.nextDueAt()).rejects.toBeInstanceOf(StoreTimeout);
    // A shutdown shortens the deadline of calls already in flight.
    bounded.shorten(1e9);
    const wide = storeWithDeadline(s, 60_000, (o) => outcomes.push(o));
    const inFlight = wide.store.nextDueAt().catch((err: unknown) => err);
    wide.shorten(50);
    expect(await inFlight).toBeInstanceOf(StoreTimeout);
    expect(outcomes).toEqual(['answered', 'timeout', 'timeout']);
  });
});
