import { openSqliteStore } from '../../src/store/sqlite.ts';

/**
 * One process starting on a SQLite file (test/store/migrate.test.ts): opens the store at
 * argv[2], records a thread, and prints `ok` or the error's message.
 */
try {
  const store = await openSqliteStore(process.argv[2] ?? '');
  await store.createThread(
    {
      teamId: 'T1',
      channelId: 'C1',
      threadTs: `${process.pid}.1`,
      userId: 'U1',
      prompt: 'p',
    },
    0,
  );
  await store.close();
  process.stdout.write('ok\n');
} catch (err) {
  process.stdout.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
