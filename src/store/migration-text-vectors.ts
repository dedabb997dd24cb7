import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** Migration 0016_text_vectors (listed in ./migrations.ts, which applies it by that name). */
export const textVectorsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    // Sentence vectors of masked reader texts from a team's embeddings endpoint, by model
    // and the text's SHA-256 (src/insights/embeddings.ts): asked once, reused by every
    // report and replica. `vector` is opaque to the store (base64 of Float32 values);
    // rows older than 90 days are pruned when vectors are written.
    await db.schema
      .createTable('text_vectors')
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('text_hash', 'text', (c) => c.notNull())
      .addColumn('vector', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('text_vectors_pk', ['model', 'text_hash'])
      .execute();
    await db.schema
      .createIndex('text_vectors_created')
      .on('text_vectors')
      .column('created_at')
      .execute();
  },
};
