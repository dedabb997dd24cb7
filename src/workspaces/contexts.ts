/**
 * The associated data each sealed value is bound to (src/sealed.ts): the row it belongs to.
 * A value copied into another row, workspace or org does not open there.
 */

interface Ids {
  enterpriseId?: string | null | undefined;
  teamId?: string | null | undefined;
}

/** An installation's body; an org-wide one's is the enterprise's alone. */
export function installationContext(i: Ids & { isEnterpriseInstall: boolean }): string {
  const team = i.isEnterpriseInstall ? '' : (i.teamId ?? '');
  return `installation:${i.enterpriseId ?? ''}:${team}:${i.isEnterpriseInstall ? 'org' : 'team'}`;
}

/** A workspace's docs admin API key. */
export function docsKeyContext(ws: Ids): string {
  return `docs-key:${ws.enterpriseId ?? ''}:${ws.teamId ?? ''}`;
}

/** A key's check value (secret_keys). */
export function keyCheckContext(keyId: string): string {
  return `key-check:${keyId}`;
}

/** What a check value holds: nothing secret, only proof that the key opens it. */
export const CHECK_TEXT = 'docs-agent key check v1';
