import { expect, it } from 'vitest';
import { describeEachEngine } from '../helpers/store-engines.ts';
import { snap, thread } from './fixtures.ts';

describeEachEngine('store: threads and jobs', (db) => {
  it('keeps the thread ↔ job mapping across a reopen', async () => {
    const t = await db.store.createThread(thread, 1000);
    await db.store.attachJob(t.id, snap(), { nextPollAt: 6000, pollIntervalMs: 5000 }, 1001);
    await db.store.close();
    db.store = await db.place.open();
    const found = await db.store.findThread('T1', 'C1', '100.1');
    expect(found).toMatchObject({
      jobId: 'job_1',
      status: 'active',
      nextPollAt: 6000,
      prompt: 'Add a quickstart',
    });
    expect(await db.store.findThread('T1', 'C1', '999.9')).toBeUndefined();
  });

  it('refuses a second thread with the same (team, channel, ts)', async () => {
    await db.store.createThread(thread, 1);
    await expect(db.store.createThread(thread, 2)).rejects.toThrow();
  });

  it('keeps a start found by its marker, and forgets one that never posted', async () => {
    const a = await db.store.createThread({ ...thread, threadTs: 'pending:a' }, 0);
    const b = await db.store.createThread({ ...thread, threadTs: 'pending:b' }, 0);
    expect(await db.store.setThreadTs(a.id, '200.1', 1)).toBe(true);
    expect(await db.store.findThread('T1', 'C1', '200.1')).toMatchObject({ id: a.id });
    await db.store.forgetStart(b.id);
    expect(await db.store.getThread(b.id)).toBeUndefined();
    await db.store.startFailed(a.id, 'interrupted', 2);
    expect(await db.store.startFailed(a.id, 'again', 3)).toBeUndefined(); // settled once
    expect(await db.store.setThreadTs(a.id, '300.1', 4)).toBe(false); // no longer starting
    await db.store.forgetStart(a.id); // only a start with nothing behind it is forgotten
    expect(await db.store.getThread(a.id)).toMatchObject({
      threadTs: '200.1',
      error: 'interrupted',
    });
  });
});
