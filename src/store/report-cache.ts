import type { Engine } from './engine.ts';
import { scopeColumns, scopedKey } from './scope.ts';
import type { Store } from './types.ts';

/**
 * Reports of settled periods, as bodies the store does not read (src/insights/cache.ts), each
 * workspace's apart (./scope.ts).
 */
export function reportCacheQueries(e: Engine): Pick<Store, 'cachedReport' | 'cacheReport'> {
  const { db } = e;
  return {
    async cachedReport(ws, key, now) {
      const row = await db
        .selectFrom('report_cache')
        .select('body')
        .where('team_id', '=', ws.teamId)
        .where('key', '=', scopedKey(ws, key))
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return row?.body;
    },

    async cacheReport(ws, key, body, expiresAt, now) {
      await db.deleteFrom('report_cache').where('expires_at', '<=', now).execute();
      await db
        .insertInto('report_cache')
        .values({ key: scopedKey(ws, key), body, expires_at: expiresAt, ...scopeColumns(ws) })
        .onConflict((oc) => oc.column('key').doUpdateSet({ body, expires_at: expiresAt }))
        .execute();
    },
  };
}
