import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Migration 0018_workspace_wiring (listed in ./migrations.ts, which applies it by that name):
 * additive, two nullable columns. A job thread and an acked command keep their team's
 * Enterprise Grid org: in distributed mode a team served by its org's org-wide install is
 * found through the org (the installation lookup falls back to it only when it is named),
 * so what is posted later for the thread, outside any request, uses that install's token.
 */
export const workspaceWiringMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('job_threads').addColumn('enterprise_id', 'text').execute();
    await db.schema.alterTable('pending_commands').addColumn('enterprise_id', 'text').execute();
  },
};
