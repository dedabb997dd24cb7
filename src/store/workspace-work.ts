import type { Engine } from './engine.ts';
import type { WorkspaceStore } from './workspace-port.ts';

/**
 * The Slack work still pending for a team that turned out to have no installation any more
 * (uninstalled, its tokens revoked): nothing of it can ever be posted, so it is settled in one
 * go instead of being tried row by row, each failing the same way.
 */
export function workspaceWorkQueries(e: Engine): Pick<WorkspaceStore, 'settleWorkspaceWork'> {
  return {
    settleWorkspaceWork: (teamId, reason, now) =>
      e.writeTx(async (tx) => {
        const threads = tx.selectFrom('job_threads').select('id').where('team_id', '=', teamId);
        // Settled as an announcement Slack refused for good is: sent_at set, the reason kept.
        const outbox = await tx
          .updateTable('outbox')
          .set({ sent_at: now, last_error: reason })
          .where('sent_at', 'is', null)
          .where('thread_id', 'in', threads)
          .executeTakeFirst();
        // Its roots show what they show: nothing behind any more, no lease held on them.
        const roots = await tx
          .updateTable('job_threads')
          .set((eb) => ({
            root_shown_version: eb.ref('root_version'),
            root_locked_by: null,
            root_locked_until: null,
          }))
          .where('team_id', '=', teamId)
          .whereRef('root_shown_version', '<', 'root_version')
          .executeTakeFirst();
        return {
          announcements: Number(outbox.numUpdatedRows),
          roots: Number(roots.numUpdatedRows),
        };
      }),
  };
}
