import type { ExpressionBuilder, Selectable } from 'kysely';
import type { Engine } from './engine.ts';
import { type Database, num } from './schema.ts';
import type { WorkspaceStore } from './workspace-port.ts';
import {
  orNull,
  UNINSTALLED_WATCHER,
  type WorkspaceForget,
  workspaceColumns,
} from './workspace-records.ts';

/** A docs row whose team has no install of its own: its org's org-wide install served it. */
function servedByTheOrg({
  not,
  exists,
  selectFrom,
}: ExpressionBuilder<Database, 'docs_connections'>) {
  return not(
    exists(
      selectFrom('installations')
        .select('installations.team_id')
        .whereRef('installations.enterprise_id', '=', 'docs_connections.enterprise_id')
        .whereRef('installations.team_id', '=', 'docs_connections.team_id'),
    ),
  );
}

/**
 * Uninstalls: a workspace's tokens and docs key go at once; the rest of its data is
 * forgotten later (UNINSTALL_RETENTION_DAYS), by whoever reads `dueForgets`.
 */
export function forgetQueries(
  e: Engine,
): Pick<
  WorkspaceStore,
  'markUninstalled' | 'stopWatchingWorkspace' | 'pendingForget' | 'dueForgets' | 'clearUninstalled'
> {
  const { db } = e;
  return {
    async stopWatchingWorkspace(ws, now) {
      const key = workspaceColumns(ws);
      const r = await db
        .updateTable('job_threads')
        .set({ unwatched_by: UNINSTALLED_WATCHER, next_poll_at: null, updated_at: now })
        .where('status', '=', 'active')
        .where('unwatched_by', 'is', null)
        .where((eb) =>
          key.team_id !== ''
            ? eb('team_id', '=', key.team_id)
            : // An org: the teams its install served, those with a docs row and no install of their own.
              eb(
                'team_id',
                'in',
                eb
                  .selectFrom('docs_connections')
                  .select('docs_connections.team_id')
                  .where('docs_connections.enterprise_id', '=', key.enterprise_id)
                  .where('docs_connections.team_id', '!=', '')
                  .where(servedByTheOrg),
              ),
        )
        .executeTakeFirst();
      return Number(r.numUpdatedRows);
    },

    markUninstalled: (ws, now, forgetAt) =>
      e.writeTx(
        async (tx) => {
          const key = workspaceColumns(ws);
          const installations = await tx
            .deleteFrom('installations')
            .where('enterprise_id', '=', key.enterprise_id)
            .where('team_id', '=', key.team_id)
            .executeTakeFirst();
          let connections = tx
            .deleteFrom('docs_connections')
            .where('enterprise_id', '=', key.enterprise_id);
          connections =
            key.team_id !== ''
              ? connections.where('team_id', '=', key.team_id)
              : // An org: its own row, and its teams' that were served by the org-wide install.
                connections.where(servedByTheOrg);
          const deleted = await connections.executeTakeFirst();
          await tx
            .insertInto('workspace_forgets')
            .values({ ...key, uninstalled_at: now, forget_at: forgetAt })
            .onConflict((oc) => oc.columns(['enterprise_id', 'team_id']).doNothing())
            .execute();
          return {
            installations: Number(installations.numDeletedRows),
            connections: Number(deleted.numDeletedRows),
          };
        },
        `uninstall:${ws.enterpriseId ?? ''}:${ws.teamId ?? ''}`,
      ),

    async pendingForget(ws) {
      const key = workspaceColumns(ws);
      const r = await db
        .selectFrom('workspace_forgets')
        .selectAll()
        .where('enterprise_id', '=', key.enterprise_id)
        .where('team_id', '=', key.team_id)
        .executeTakeFirst();
      return r && forgetOf(r);
    },

    async dueForgets(now, limit) {
      const rows = await db
        .selectFrom('workspace_forgets')
        .selectAll()
        .where('forget_at', '<=', now)
        .orderBy('forget_at')
        .orderBy('enterprise_id')
        .orderBy('team_id')
        .limit(limit)
        .execute();
      return rows.map(forgetOf);
    },

    async clearUninstalled(ws) {
      const key = workspaceColumns(ws);
      const r = await db
        .deleteFrom('workspace_forgets')
        .where('enterprise_id', '=', key.enterprise_id)
        .where('team_id', '=', key.team_id)
        .executeTakeFirst();
      return Number(r.numDeletedRows) === 1;
    },
  };
}

function forgetOf(r: Selectable<Database['workspace_forgets']>): WorkspaceForget {
  return {
    enterpriseId: orNull(r.enterprise_id),
    teamId: orNull(r.team_id),
    uninstalledAt: num(r.uninstalled_at),
    forgetAt: num(r.forget_at),
  };
}
