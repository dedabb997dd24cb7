import type { Engine } from './engine.ts';
import type { WorkspaceStore } from './workspace-port.ts';
import { orNull, type SealedKind, type SealedSecret } from './workspace-records.ts';

/**
 * The bookkeeping of sealed values, for the start-up key check and the rotation command
 * (src/workspaces/): which key sealed how many values, each key's check value, and
 * re-sealing in batches. The values stay opaque: `reseal` is the caller's.
 */
export function sealedValueQueries(
  e: Engine,
): Pick<WorkspaceStore, 'keyChecks' | 'putKeyCheck' | 'sealedCounts' | 'resealSecrets'> {
  const { db } = e;
  return {
    async keyChecks() {
      const rows = await db
        .selectFrom('secret_keys')
        .select(['key_id', 'check_value'])
        .orderBy('key_id')
        .execute();
      return rows.map((r) => ({ keyId: r.key_id, check: r.check_value }));
    },

    async putKeyCheck(keyId, check, now) {
      await db
        .insertInto('secret_keys')
        .values({ key_id: keyId, check_value: check, created_at: now })
        .onConflict((oc) => oc.column('key_id').doNothing())
        .execute();
      const row = await db
        .selectFrom('secret_keys')
        .select('check_value')
        .where('key_id', '=', keyId)
        .executeTakeFirstOrThrow();
      return row.check_value;
    },

    async sealedCounts() {
      const installations = await db
        .selectFrom('installations')
        .select(['key_id', (eb) => eb.fn.countAll<number | string>().as('n')])
        .groupBy('key_id')
        .execute();
      const docs = await db
        .selectFrom('docs_connections')
        .select(['key_id', (eb) => eb.fn.countAll<number | string>().as('n')])
        .where('key_id', 'is not', null)
        .groupBy('key_id')
        .execute();
      const counts = (kind: SealedKind, rows: { key_id: string | null; n: number | string }[]) =>
        rows.map((r) => ({ kind, keyId: r.key_id ?? '', count: Number(r.n) }));
      return [...counts('installation', installations), ...counts('docs_key', docs)].sort(
        (a, b) => a.kind.localeCompare(b.kind) || a.keyId.localeCompare(b.keyId),
      );
    },

    resealSecrets: (kind, keepKeyId, limit, reseal) =>
      e.writeTx(async (tx) => {
        const secrets = await (kind === 'installation'
          ? installationSecrets(e, tx, keepKeyId, limit)
          : docsKeySecrets(e, tx, keepKeyId, limit));
        for (const s of secrets) {
          const next = reseal(s);
          if (next.keyId !== keepKeyId)
            throw new Error(`a value re-sealed for rotation must be sealed by '${keepKeyId}'`);
          const where = { enterprise_id: s.enterpriseId ?? '', team_id: s.teamId ?? '' };
          if (kind === 'installation')
            await tx
              .updateTable('installations')
              .set({ sealed: next.sealed, key_id: next.keyId })
              .where('enterprise_id', '=', where.enterprise_id)
              .where('team_id', '=', where.team_id)
              .where('is_enterprise_install', '=', s.isEnterpriseInstall ? 1 : 0)
              .execute();
          else
            await tx
              .updateTable('docs_connections')
              .set({ sealed_key: next.sealed, key_id: next.keyId })
              .where('enterprise_id', '=', where.enterprise_id)
              .where('team_id', '=', where.team_id)
              .execute();
        }
        return secrets.length;
      }),
  };
}

type Tx = Parameters<Parameters<Engine['writeTx']>[0]>[0];

async function installationSecrets(
  e: Engine,
  tx: Tx,
  keepKeyId: string,
  limit: number,
): Promise<SealedSecret[]> {
  const rows = await e
    .forUpdate(
      tx
        .selectFrom('installations')
        .select(['enterprise_id', 'team_id', 'is_enterprise_install', 'sealed', 'key_id'])
        .where('key_id', '!=', keepKeyId)
        .orderBy('enterprise_id')
        .orderBy('team_id')
        .orderBy('is_enterprise_install')
        .limit(limit),
    )
    .execute();
  return rows.map((r) => ({
    kind: 'installation',
    enterpriseId: orNull(r.enterprise_id),
    teamId: orNull(r.team_id),
    isEnterpriseInstall: Number(r.is_enterprise_install) === 1,
    sealed: r.sealed,
    keyId: r.key_id,
  }));
}

async function docsKeySecrets(
  e: Engine,
  tx: Tx,
  keepKeyId: string,
  limit: number,
): Promise<SealedSecret[]> {
  const rows = await e
    .forUpdate(
      tx
        .selectFrom('docs_connections')
        .select(['enterprise_id', 'team_id', 'sealed_key', 'key_id'])
        .where('key_id', 'is not', null)
        .where('key_id', '!=', keepKeyId)
        .orderBy('enterprise_id')
        .orderBy('team_id')
        .limit(limit),
    )
    .execute();
  return rows.map((r) => ({
    kind: 'docs_key',
    enterpriseId: orNull(r.enterprise_id),
    teamId: orNull(r.team_id),
    isEnterpriseInstall: false,
    sealed: r.sealed_key ?? '',
    keyId: r.key_id ?? '',
  }));
}
