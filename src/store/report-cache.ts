import type { Engine } from './engine.ts';
import type { Store } from './types.ts';

/** Reports of settled periods, as bodies the store does not read (src/insights/cache.ts). */
export function reportCacheQueries(e: Engine): Pick<Store, 'cachedReport' | 'cacheReport'> {
  const { db } = e;
  return {
    async cachedReport(key: string, now: number) {
      const row = await db
        .selectFrom('report_cache')
        .select('body')
        .where('key', '=', key)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return row?.body;
    },

    async cacheReport(key: string, body: string, expiresAt: number, now: number) {
      await db.deleteFrom('report_cache').where('expires_at', '<=', now).execute();
      await db
        .insertInto('report_cache')
        .values({ key, body, expires_at: expiresAt })
        .onConflict((oc) => oc.column('key').doUpdateSet({ body, expires_at: expiresAt }))
        .execute();
    },
  };
}
