import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.ts';
import { engines, type Place, snap, thread } from './engines.ts';

describe.each(engines)('store: threads and jobs (%s)', (_name, setup) => {
  let place: Place;
  let store: Store;
  beforeEach(async () => {
    place = await setup();
    store = await place.open();
  });
  afterEach(async () => {
    await store.close();
    await place.cleanup();
  });

  it('keeps the thread ↔ job mapping across a reopen', async () => {
    const t = await store.createThread(thread, 1000);
    await store.attachJob(t.id, snap(), { nextPollAt: 6000, pollIntervalMs: 5000 }, 1001);
    await store.close();
    store = await place.open();
    const found = await store.findThread('T1', 'C1', '100.1');
    expect(found).toMatchObject({
      jobId: 'job_1',
      status: 'active',
      nextPollAt: 6000,
      prompt: 'Add a quickstart',
    });
    expect(await store.findThread('T1', 'C1', '999.9')).toBeUndefined();
  });

  it('refuses a second thread with the same (team, channel, ts)', async () => {
    await store.createThread(thread, 1);
    await expect(store.createThread(thread, 2)).rejects.toThrow();
  });

  it('keeps a start found by its marker, and forgets one that never posted', async () => {
    const a = await store.createThread({ ...thread, threadTs: 'pending:a' }, 0);
    const b = await store.createThread({ ...thread, threadTs: 'pending:b' }, 0);
    expect(await store.setThreadTs(a.id, '200.1', 1)).toBe(true);
    expect(await store.findThread('T1', 'C1', '200.1')).toMatchObject({ id: a.id });
    await store.forgetStart(b.id);
    expect(await store.getThread(b.id)).toBeUndefined();
    await store.startFailed(a.id, 'interrupted', 2);
    expect(await store.startFailed(a.id, 'again', 3)).toBeUndefined(); // settled once
    expect(await store.setThreadTs(a.id, '300.1', 4)).toBe(false); // no longer starting
    await store.forgetStart(a.id); // only a start with nothing behind it is forgotten
    expect(await store.getThread(a.id)).toMatchObject({ threadTs: '200.1', error: 'interrupted' });
  });
});
