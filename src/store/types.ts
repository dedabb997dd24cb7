/**
 * The store: everything the bot must not lose on a restart, shared by every replica on the
 * same database. One interface, two engines behind it (SQLite for one process, PostgreSQL
 * for several), proven equal by one shared test suite. The rest of the bot imports it from
 * here: the `Store` interface (./port.ts) and the records it keeps and answers (./records.ts;
 * those of the reports and insights in ./state-records.ts).
 */
export type { Store } from './port.ts';
export * from './records.ts';
export * from './state-records.ts';
export type { WorkspaceStore } from './workspace-port.ts';
export * from './workspace-records.ts';
