import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/** The tables of the bot's own state that become per workspace (src/store/scope.ts). */
export const SCOPED_TABLES = [
  'report_cache',
  'report_headlines',
  'text_vectors',
  'insight_gaps',
  'digest_runs',
] as const;

/**
 * Migration 0019_workspace_scope (listed in ./migrations.ts, which applies it by that name):
 * additive. Each table of the bot's own state gains the workspace it belongs to, a team and
 * its Enterprise Grid org, both '' by default: the rows already there, and any an older
 * build writes, are the single workspace's (SINGLE_WORKSPACE). The tables' unique keys stay
 * as they are, since an older build upserts on them; a workspace's key carries its team
 * instead (scopedKey). An index on the team finds a workspace's rows (its reads, and the
 * retention sweep that forgets an uninstalled workspace).
 */
export const workspaceScopeMigration: Migration = {
  async up(db: Kysely<unknown>) {
    for (const table of SCOPED_TABLES) {
      for (const column of ['team_id', 'enterprise_id'])
        await db.schema
          .alterTable(table)
          .addColumn(column, 'text', (c) => c.notNull().defaultTo(''))
          .execute();
    }
    // A workspace's gaps of a project, most recently listed first (gapsOf).
    await db.schema
      .createIndex('insight_gaps_team_seen')
      .on('insight_gaps')
      .columns(['team_id', 'project_id', 'last_seen_at'])
      .execute();
    for (const table of ['report_cache', 'report_headlines', 'text_vectors', 'digest_runs'])
      await db.schema.createIndex(`${table}_team`).on(table).column('team_id').execute();
  },
};

/**
 * Migration 0020_visitor_points_scope: the chart points (a day's counts of a project, kept
 * once settled) are per workspace too, as 0019 made the rest of the bot's own state: two
 * workspaces connected to one project keep their own points (each read with its own key),
 * and an uninstalled workspace's are forgotten with the rest. Additive, as 0019: the rows
 * already there, and any an older build writes, are the single workspace's; a workspace's
 * range key carries its team (scopedKey).
 */
export const visitorPointsScopeMigration: Migration = {
  async up(db: Kysely<unknown>) {
    for (const column of ['team_id', 'enterprise_id'])
      await db.schema
        .alterTable('visitor_points')
        .addColumn(column, 'text', (c) => c.notNull().defaultTo(''))
        .execute();
    await db.schema
      .createIndex('visitor_points_team')
      .on('visitor_points')
      .column('team_id')
      .execute();
  },
};

/**
 * Migration 0021_team_polls: a claim of due polls takes workspaces in turn
 * (src/store/leases.ts): each team's soonest due, read from here without reading the other
 * teams' backlog. Watched jobs only: finished ones (no next poll) pile up and are never claimed.
 */
export const teamPollsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex('job_threads_team_poll')
      .on('job_threads')
      .columns(['team_id', 'next_poll_at', 'id'])
      .where(sql.ref('next_poll_at'), 'is not', null)
      .execute();
  },
};
