import type { Selectable } from 'kysely';
import type { Engine } from './engine.ts';
import { type Database, num } from './schema.ts';
import type { WorkspaceStore } from './workspace-port.ts';
import {
  type InstallationQuery,
  type InstallationSummary,
  orNull,
  type SealedInstallation,
  workspaceColumns,
} from './workspace-records.ts';

type Row = Selectable<Database['installations']>;

/** Slack installations of the distributed mode, each body sealed (src/workspaces/vault.ts). */
export function installationQueries(
  e: Engine,
): Pick<
  WorkspaceStore,
  'saveInstallation' | 'findInstallation' | 'deleteInstallation' | 'listInstallations'
> {
  const { db } = e;
  const one = (key: { enterprise_id: string; team_id: string }, org: boolean) =>
    db
      .selectFrom('installations')
      .selectAll()
      .where('enterprise_id', '=', key.enterprise_id)
      .where('team_id', '=', key.team_id)
      .where('is_enterprise_install', '=', org ? 1 : 0)
      .executeTakeFirst();

  return {
    async saveInstallation(i) {
      const key = installationKey(i);
      const values = {
        installer_user_id: i.installerUserId,
        bot_user_id: i.botUserId,
        sealed: i.sealed,
        key_id: i.keyId,
        updated_at: i.now,
      };
      await db
        .insertInto('installations')
        .values({ ...key, ...values, installed_at: i.now })
        .onConflict((oc) =>
          oc.columns(['enterprise_id', 'team_id', 'is_enterprise_install']).doUpdateSet(values),
        )
        .execute();
    },

    async findInstallation(q) {
      const key = installationKey(q);
      const own = await one(key, key.is_enterprise_install === 1);
      if (own) return sealedOf(own);
      if (key.is_enterprise_install === 1 || key.enterprise_id === '') return undefined;
      const org = await one({ enterprise_id: key.enterprise_id, team_id: '' }, true);
      return org && sealedOf(org);
    },

    async deleteInstallation(q) {
      const key = installationKey(q);
      const r = await db
        .deleteFrom('installations')
        .where('enterprise_id', '=', key.enterprise_id)
        .where('team_id', '=', key.team_id)
        .where('is_enterprise_install', '=', key.is_enterprise_install)
        .executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },

    async listInstallations() {
      const rows = await db
        .selectFrom('installations')
        .select([
          'enterprise_id',
          'team_id',
          'is_enterprise_install',
          'installer_user_id',
          'bot_user_id',
          'installed_at',
          'updated_at',
        ])
        .orderBy('enterprise_id')
        .orderBy('team_id')
        .orderBy('is_enterprise_install')
        .execute();
      return rows.map(summaryOf);
    },
  };
}

/**
 * The row key of an installation or a query: an org-wide one is the enterprise's alone (its
 * team, if a query names one, is where the event happened, not part of the install).
 */
function installationKey(q: InstallationQuery) {
  const org = q.isEnterpriseInstall === true;
  if (org && !q.enterpriseId) throw new Error('an org-wide installation needs an enterprise id');
  const key = workspaceColumns(org ? { enterpriseId: q.enterpriseId } : q);
  if (!org && key.team_id === '') throw new Error('a workspace installation needs a team id');
  return { ...key, is_enterprise_install: org ? 1 : 0 };
}

function summaryOf(r: Omit<Row, 'sealed' | 'key_id'>): InstallationSummary {
  return {
    enterpriseId: orNull(r.enterprise_id),
    teamId: orNull(r.team_id),
    isEnterpriseInstall: Number(r.is_enterprise_install) === 1,
    installerUserId: r.installer_user_id,
    botUserId: r.bot_user_id,
    installedAt: num(r.installed_at),
    updatedAt: num(r.updated_at),
  };
}

function sealedOf(r: Row): SealedInstallation {
  return { ...summaryOf(r), sealed: r.sealed, keyId: r.key_id };
}
