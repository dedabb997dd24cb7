import pg from 'pg';

/**
 * Moves every timestamp in the bot's tables `ms` back: leases, claims, staleness and budget
 * windows then look `ms` older to bots on the database's clock. Every BIGINT column of
 * ours holds epoch milliseconds.
 */
export async function ageDatabase(url: string, ms: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string; column_name: string }>(
      `select table_name, column_name from information_schema.columns
        where table_schema = 'public' and data_type = 'bigint' and table_name not like 'kysely_%'`,
    );
    await client.query('begin');
    for (const { table_name: table, column_name: column } of rows)
      await client.query(
        `update "${table}" set "${column}" = "${column}" - $1 where "${column}" is not null`,
        [ms],
      );
    await client.query('commit');
  } finally {
    await client.end();
  }
}
