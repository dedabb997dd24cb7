import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Migration 0017_workspaces (listed in ./migrations.ts, which applies it by that name):
 * additive, four new tables.
 */
export const workspacesMigration: Migration = {
  async up(db: Kysely<unknown>) {
    // The distributed mode's installations, docs connections and uninstalls, keyed by
    // enterprise and team ('' for none: an org-wide install has no team, a workspace
    // outside Enterprise Grid no enterprise). Secrets are sealed before they get here.
    await db.schema
      .createTable('installations')
      .addColumn('enterprise_id', 'text', (c) => c.notNull())
      .addColumn('team_id', 'text', (c) => c.notNull())
      .addColumn('is_enterprise_install', 'integer', (c) => c.notNull())
      .addColumn('installer_user_id', 'text')
      .addColumn('bot_user_id', 'text')
      .addColumn('sealed', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('installed_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('installations_pk', [
        'enterprise_id',
        'team_id',
        'is_enterprise_install',
      ])
      .execute();
    await db.schema
      .createTable('docs_connections')
      .addColumn('enterprise_id', 'text', (c) => c.notNull())
      .addColumn('team_id', 'text', (c) => c.notNull())
      .addColumn('project_id', 'text')
      .addColumn('sealed_key', 'text')
      .addColumn('key_id', 'text')
      .addColumn('connected_by', 'text')
      .addColumn('connected_at', 'bigint')
      .addColumn('settings', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('docs_connections_pk', ['enterprise_id', 'team_id'])
      .execute();
    await db.schema
      .createTable('workspace_forgets')
      .addColumn('enterprise_id', 'text', (c) => c.notNull())
      .addColumn('team_id', 'text', (c) => c.notNull())
      .addColumn('uninstalled_at', 'bigint', (c) => c.notNull())
      .addColumn('forget_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('workspace_forgets_pk', ['enterprise_id', 'team_id'])
      .execute();
    await db.schema
      .createIndex('workspace_forgets_due')
      .on('workspace_forgets')
      .column('forget_at')
      .execute();
    await db.schema
      .createTable('secret_keys')
      .addColumn('key_id', 'text', (c) => c.primaryKey())
      .addColumn('check_value', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
