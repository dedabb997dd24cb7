import type { Engine } from './engine.ts';
import { num } from './schema.ts';
import type { Store } from './types.ts';

/** Which docs project each bound channel uses (`/agent project`). */
export function projectQueries(
  e: Engine,
): Pick<Store, 'channelProject' | 'bindChannelProject' | 'unbindChannelProject'> {
  const { db } = e;
  return {
    async channelProject(teamId: string, channelId: string) {
      const row = await db
        .selectFrom('channel_projects')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('channel_id', '=', channelId)
        .executeTakeFirst();
      return (
        row && {
          teamId: row.team_id,
          channelId: row.channel_id,
          projectId: row.project_id,
          setBy: row.set_by,
          setAt: num(row.set_at),
        }
      );
    },

    async bindChannelProject(b) {
      const values = { project_id: b.projectId, set_by: b.setBy, set_at: b.setAt };
      await db
        .insertInto('channel_projects')
        .values({ team_id: b.teamId, channel_id: b.channelId, ...values })
        .onConflict((oc) => oc.columns(['team_id', 'channel_id']).doUpdateSet(values))
        .execute();
    },

    async unbindChannelProject(teamId: string, channelId: string) {
      const r = await db
        .deleteFrom('channel_projects')
        .where('team_id', '=', teamId)
        .where('channel_id', '=', channelId)
        .executeTakeFirst();
      return Number(r.numDeletedRows) === 1;
    },
  };
}
