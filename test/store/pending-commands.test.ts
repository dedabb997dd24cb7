import { expect, it } from 'vitest';
import { CommandTakenOver } from '../../src/store/types.ts';
import { recordOne } from '../helpers/pending.ts';
import { describeEachEngine } from '../helpers/store-engines.ts';

const command = {
  teamId: 'T1',
  channelId: 'C1',
  userId: 'U1',
  text: 'Add a quickstart',
  responseUrl: 'https://hooks.slack.test/commands/1',
};

describeEachEngine('store: pending commands', (db) => {
  it('keeps a command for its owner until the start takes it, once', async () => {
    const id = await recordOne(db.store, command, { owner: 'p1', until: 1_000 }, 10);
    // Alive and holding it: nobody else may claim it.
    expect(await db.store.claimPendingCommands(999, 10, { owner: 'p2', until: 5_000 })).toEqual([]);
    expect(await db.store.takePendingCommand(id, 'p2')).toBe(false);
    expect(await db.store.takePendingCommand(id, 'p1')).toBe(true);
    expect(await db.store.takePendingCommand(id, 'p1')).toBe(false);
    expect(await db.store.claimPendingCommands(10_000, 10, { owner: 'p2', until: 20_000 })).toEqual(
      [],
    );
  });

  it('hands a command whose lease ran out to the next claimer, and the first owner can no longer take it', async () => {
    const id = await recordOne(
      db.store,
      { ...command, conversation: 'im' },
      { owner: 'p1', until: 1_000 },
      10,
    );
    const other = await recordOne(db.store, command, { owner: 'p1', until: 1_000 }, 20);
    await db.store.renewPendingCommands([other], 'p1', 3_000); // still waiting in p1's queue
    const claimed = await db.store.claimPendingCommands(1_000, 10, { owner: 'p2', until: 5_000 });
    expect(claimed).toEqual([
      { id, ...command, conversation: 'im', receivedAt: 10, owner: 'p2', leaseUntil: 5_000 },
    ]);
    expect(await db.store.takePendingCommand(id, 'p1')).toBe(false);
    expect(await db.store.takePendingCommand(id, 'p2')).toBe(true);
    // Given up at once (a graceful stop): claimable now, not when the lease would end.
    await db.store.renewPendingCommands([other], 'p1', 0);
    expect(
      await db.store.claimPendingCommands(1_001, 10, { owner: 'p3', until: 5_000 }),
    ).toMatchObject([{ id: other, owner: 'p3', conversation: null }]);
  });

  it('gives each orphaned command to one of two racing claimers', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 20; i++)
      ids.push(await recordOne(db.store, command, { owner: 'dead', until: 100 }, i));
    const other = await db.another();
    const [a, b] = await Promise.all([
      db.store.claimPendingCommands(200, 15, { owner: 'r1', until: 5_000 }),
      other.claimPendingCommands(200, 15, { owner: 'r2', until: 5_000 }),
    ]);
    const all = [...a, ...b].map((c) => c.id).sort((x, y) => x - y);
    expect(all).toEqual(ids);
  });

  it('goes with the thread that starts it, in one transaction; a command has one thread', async () => {
    const thread = (ts: string) => ({
      teamId: 'T1',
      channelId: 'C1',
      threadTs: ts,
      userId: 'U1',
      prompt: 'Add a quickstart',
    });
    const url = command.responseUrl;
    const id = await recordOne(db.store, command, { owner: 'p1', until: 1_000 }, 10);
    expect(await db.store.commandStarted(url)).toBe(false);
    const t = await db.store.createThread(
      { ...thread('pending:a'), command: { responseUrl: url, owner: 'p1' } },
      20,
    );
    expect(t.threadTs).toBe('pending:a');
    expect(await db.store.commandStarted(url)).toBe(true);
    // The thread took the record: nothing left to renew, claim or take.
    expect(await db.store.renewPendingCommands([id], 'p1', 3_000)).toEqual([]);
    expect(await db.store.claimPendingCommands(10_000, 10, { owner: 'p3', until: 20_000 })).toEqual(
      [],
    );
    expect(await db.store.takePendingCommand(id, 'p1')).toBe(false);

    // A second start of the same command (a takeover, or a record that committed late)
    // records nothing, and says why.
    await expect(
      db.store.createThread(
        { ...thread('pending:b'), command: { responseUrl: url, owner: 'p2' } },
        30,
      ),
    ).rejects.toBeInstanceOf(CommandTakenOver);
    expect(await db.store.findThread('T1', 'C1', 'pending:b')).toBeUndefined();

    // A thread that cannot be inserted for another reason leaves the command recorded.
    const other = { ...command, responseUrl: 'https://hooks.slack.test/commands/2' };
    const again = await recordOne(db.store, other, { owner: 'p1', until: 1_000 }, 40);
    const clash = db.store.createThread(
      { ...thread('pending:a'), command: { responseUrl: other.responseUrl, owner: 'p1' } },
      50,
    );
    await expect(clash).rejects.toThrow();
    await expect(clash).rejects.not.toBeInstanceOf(CommandTakenOver);
    expect(await db.store.renewPendingCommands([again], 'p1', 2_000)).toEqual([again]);
    // Let go only by its holder.
    await db.store.releasePendingCommand(other.responseUrl, 'p2');
    expect(await db.store.renewPendingCommands([again], 'p1', 2_000)).toEqual([again]);
    await db.store.releasePendingCommand(other.responseUrl, 'p1');
    expect(await db.store.renewPendingCommands([again], 'p1', 2_000)).toEqual([]);
  });
});
