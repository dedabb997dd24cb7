import type { Selectable } from 'kysely';
import { readSettings, WorkspaceSettingsSchema } from '../workspace-settings.ts';
import type { Engine } from './engine.ts';
import { type Database, num } from './schema.ts';
import type { WorkspaceStore } from './workspace-port.ts';
import { orNull, type StoredDocsConnection, workspaceColumns } from './workspace-records.ts';

/** The columns of a connection, all null once disconnected. */
const NO_CONNECTION = {
  project_id: null,
  sealed_key: null,
  key_id: null,
  connected_by: null,
  connected_at: null,
};

/**
 * Each workspace's docs project, its sealed admin API key (src/workspaces/vault.ts seals and
 * opens it) and its settings (src/workspace-settings.ts), one row per workspace.
 */
export function docsConnectionQueries(
  e: Engine,
): Pick<
  WorkspaceStore,
  | 'connectDocs'
  | 'disconnectDocs'
  | 'getDocsConnection'
  | 'docsConnectionsOfTeam'
  | 'connectedWorkspaces'
  | 'updateWorkspaceSettings'
> {
  const { db } = e;
  return {
    async connectDocs(ws, c) {
      const connection = {
        project_id: c.projectId,
        sealed_key: c.sealedKey,
        key_id: c.keyId,
        connected_by: c.connectedBy,
        connected_at: c.now,
        updated_at: c.now,
      };
      await db
        .insertInto('docs_connections')
        .values({ ...workspaceColumns(ws), ...connection, settings: '{}' })
        .onConflict((oc) => oc.columns(['enterprise_id', 'team_id']).doUpdateSet(connection))
        .execute();
    },

    async disconnectDocs(ws, now) {
      const key = workspaceColumns(ws);
      const r = await db
        .updateTable('docs_connections')
        .set({ ...NO_CONNECTION, updated_at: now })
        .where('enterprise_id', '=', key.enterprise_id)
        .where('team_id', '=', key.team_id)
        .where('key_id', 'is not', null)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
    },

    async getDocsConnection(ws) {
      const key = workspaceColumns(ws);
      const r = await db
        .selectFrom('docs_connections')
        .selectAll()
        .where('enterprise_id', '=', key.enterprise_id)
        .where('team_id', '=', key.team_id)
        .executeTakeFirst();
      return r && rowOf(r);
    },

    async docsConnectionsOfTeam(teamId) {
      if (teamId === '') return [];
      const rows = await db
        .selectFrom('docs_connections')
        .selectAll()
        .where('team_id', '=', teamId)
        .orderBy('updated_at', 'desc')
        .execute();
      return rows.map(rowOf);
    },

    async connectedWorkspaces() {
      const rows = await db
        .selectFrom('docs_connections')
        .select(['enterprise_id', 'team_id', 'project_id', 'settings'])
        .where('key_id', 'is not', null)
        .where('project_id', 'is not', null)
        .orderBy('team_id')
        .orderBy('enterprise_id')
        .execute();
      return rows.map((r) => ({
        enterpriseId: orNull(r.enterprise_id),
        teamId: orNull(r.team_id),
        projectId: r.project_id!,
        settings: readSettings(r.settings),
      }));
    },

    async updateWorkspaceSettings(ws, settings, now) {
      const body = JSON.stringify(WorkspaceSettingsSchema.parse(settings));
      await db
        .insertInto('docs_connections')
        .values({ ...workspaceColumns(ws), ...NO_CONNECTION, settings: body, updated_at: now })
        .onConflict((oc) =>
          oc.columns(['enterprise_id', 'team_id']).doUpdateSet({ settings: body, updated_at: now }),
        )
        .execute();
    },
  };
}

/** A row as the store answers it: a connection only when all its columns are there. */
function rowOf(r: Selectable<Database['docs_connections']>): StoredDocsConnection {
  const connected =
    r.project_id !== null &&
    r.sealed_key !== null &&
    r.key_id !== null &&
    r.connected_by !== null &&
    r.connected_at !== null;
  return {
    enterpriseId: orNull(r.enterprise_id),
    teamId: orNull(r.team_id),
    connection: connected
      ? {
          projectId: r.project_id!,
          sealedKey: r.sealed_key!,
          keyId: r.key_id!,
          connectedBy: r.connected_by!,
          connectedAt: num(r.connected_at!),
        }
      : null,
    settings: readSettings(r.settings),
    updatedAt: num(r.updated_at),
  };
}
