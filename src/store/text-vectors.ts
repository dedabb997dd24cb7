import type { Engine } from './engine.ts';
import { scopeColumns, scopedKey } from './scope.ts';
import type { Store } from './types.ts';

/** Hashes asked in one statement, and rows written in one: well under both engines' limits. */
const READ_CHUNK = 500;
const WRITE_CHUNK = 200;

/**
 * Sentence vectors by (model, SHA-256 of the masked text), as the insights grouping caches
 * them (src/insights/embeddings.ts); the vector is opaque text to the store. Each workspace
 * keeps its own (./scope.ts: the model column carries a workspace's team).
 */
export function textVectorQueries(e: Engine): Pick<Store, 'textVectors' | 'putTextVectors'> {
  const { db } = e;
  return {
    async textVectors(ws, model, hashes) {
      const found = new Map<string, string>();
      const unique = [...new Set(hashes)];
      for (let i = 0; i < unique.length; i += READ_CHUNK) {
        const rows = await db
          .selectFrom('text_vectors')
          .select(['text_hash', 'vector'])
          .where('team_id', '=', ws.teamId)
          .where('model', '=', scopedKey(ws, model))
          .where('text_hash', 'in', unique.slice(i, i + READ_CHUNK))
          .execute();
        for (const r of rows) found.set(r.text_hash, r.vector);
      }
      return found;
    },

    async putTextVectors(ws, model, rows, now, pruneBefore) {
      await db.deleteFrom('text_vectors').where('created_at', '<', pruneBefore).execute();
      // The last of two rows for one hash wins, as it would row by row.
      const unique = [...new Map(rows.map((r) => [r.hash, r.vector])).entries()];
      for (let i = 0; i < unique.length; i += WRITE_CHUNK) {
        await db
          .insertInto('text_vectors')
          .values(
            unique.slice(i, i + WRITE_CHUNK).map(([hash, vector]) => ({
              model: scopedKey(ws, model),
              ...scopeColumns(ws),
              text_hash: hash,
              vector,
              created_at: now,
            })),
          )
          .onConflict((oc) =>
            oc.columns(['model', 'text_hash']).doUpdateSet((eb) => ({
              vector: eb.ref('excluded.vector'),
              created_at: eb.ref('excluded.created_at'),
            })),
          )
          .execute();
      }
    },
  };
}
