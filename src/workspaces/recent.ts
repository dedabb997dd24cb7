import type { InstallationQuery, WorkspaceKey } from '../store/workspace-records.ts';
import type { Vault } from './vault.ts';

/**
 * Distributed mode's short memory of what every request reads before its first answer: the
 * workspace's installation (Bolt's authorize, opened from the vault) and its docs row (the
 * docs gate's "connected?" and the access check's lists). Each is kept at most `ttlMs`
 * (RECENT_TTL_MS), for at most MAX_KEPT workspaces, so a person's second `/agent` costs no
 * database read. What this process changes is forgotten at once (`forgettingReads`: install,
 * token refresh, uninstall, connect, replace, disconnect, settings saved); a change made by
 * another replica is seen within `ttlMs`. Only what a request may act on is kept (an
 * installation found, a docs project connected): a fresh install or connection made
 * elsewhere is seen at the next request. Lookups of one workspace at once share one read,
 * and a read begun before a forget keeps nothing.
 */

/** How long a read is used without reading the store again (docs/operating.md). */
export const RECENT_TTL_MS = 10_000;
/** Workspaces kept; the least recently read goes first. */
const MAX_KEPT = 10_000;

/** The ids a read is kept under (what the store's lookup was given). */
export interface RecentKey {
  enterpriseId?: string | null | undefined;
  teamId?: string | null | undefined;
  /** An org-wide install's lookup: the org's alone, whatever team asks. */
  isEnterpriseInstall?: boolean | undefined;
}

export interface Recent<T> {
  /**
   * What `read` answers for `ws`, or what it answered less than the TTL ago. `until` says how
   * long an answer may be kept (at most the TTL; 0 or less: not kept).
   */
  get(ws: RecentKey, read: () => Promise<T>, until: (value: T) => number): Promise<T>;
  /** Drops what is kept under exactly these ids (reads under way still keep theirs). */
  drop(ws: RecentKey): void;
  /** Drops what is kept for a workspace, or for every team of an org (no team named). */
  forget(ws: Pick<RecentKey, 'enterpriseId' | 'teamId'>): void;
  /** Drops everything kept (reads under way keep nothing). */
  clear(): void;
}

interface Kept<T> {
  value: T;
  freshUntil: number;
}

const keyOf = (ws: RecentKey) =>
  `${ws.enterpriseId || ''}:${ws.isEnterpriseInstall ? '' : ws.teamId || ''}:${ws.isEnterpriseInstall ? 1 : 0}`;

/**
 * `maxTtlMs` bounds what `ttlMs` may ask for (RECENT_TTL_MS unless the cache says otherwise:
 * the docs keys of ./docs-keys.ts are kept longer, as the Slack tokens are).
 */
export function createRecent<T>(
  o: { now?: () => number; ttlMs?: number; maxTtlMs?: number } = {},
): Recent<T> {
  const now = o.now ?? Date.now;
  const maxTtlMs = o.maxTtlMs ?? RECENT_TTL_MS;
  const ttlMs = Math.min(o.ttlMs ?? maxTtlMs, maxTtlMs);
  const kept = new Map<string, Kept<T>>();
  const asking = new Map<string, Promise<T>>();
  let forgets = 0;

  async function readAndKeep(key: string, read: () => Promise<T>, until: (v: T) => number) {
    const began = forgets;
    const value = await read();
    const freshUntil = Math.min(now() + ttlMs, until(value));
    kept.delete(key);
    if (began !== forgets || freshUntil <= now()) return value;
    kept.set(key, { value, freshUntil });
    if (kept.size > MAX_KEPT) kept.delete(kept.keys().next().value ?? '');
    return value;
  }

  return {
    get(ws, read, until) {
      const key = keyOf(ws);
      const had = kept.get(key);
      if (had && had.freshUntil > now()) return Promise.resolve(had.value);
      const sharing = asking.get(key);
      if (sharing) return sharing;
      const pending: Promise<T> = readAndKeep(key, read, until).finally(() => {
        if (asking.get(key) === pending) asking.delete(key);
      });
      asking.set(key, pending);
      return pending;
    },

    drop(ws) {
      kept.delete(keyOf(ws));
    },

    clear() {
      forgets++;
      asking.clear();
      kept.clear();
    },

    forget(ws) {
      forgets++;
      asking.clear();
      const team = ws.teamId || '';
      const org = ws.enterpriseId || '';
      for (const key of [...kept.keys()]) {
        const [e, t] = key.split(':') as [string, string];
        if (team ? t === team && (org === '' || e === org) : e === org) kept.delete(key);
      }
    },
  };
}

type Forget = (ws: WorkspaceKey | InstallationQuery) => void;

/** The ids a change names, as `Recent.forget` takes them (an org-wide install: its org). */
function placeOf(ws: WorkspaceKey | InstallationQuery): WorkspaceKey {
  const org = (ws as InstallationQuery).isEnterpriseInstall === true;
  return { enterpriseId: ws.enterpriseId ?? null, teamId: org ? null : (ws.teamId ?? null) };
}

/**
 * The vault, forgetting what is kept of a workspace whenever this process changes it: its
 * installation saved (an install, a refreshed token) or deleted, its docs project connected,
 * replaced or disconnected, its settings saved, its uninstall.
 */
export function forgettingReads<
  V extends Pick<
    Vault,
    | 'saveInstallation'
    | 'deleteInstallation'
    | 'connectDocs'
    | 'disconnectDocs'
    | 'updateSettings'
    | 'markUninstalled'
  >,
>(vault: V, forget: Forget): V {
  const after = async <R>(ws: WorkspaceKey | InstallationQuery, change: () => Promise<R>) => {
    try {
      return await change();
    } finally {
      forget(placeOf(ws));
    }
  };
  return {
    ...vault,
    saveInstallation: (i) => after(i, () => vault.saveInstallation(i)),
    deleteInstallation: (q) => after(q, () => vault.deleteInstallation(q)),
    connectDocs: (ws, c) => after(ws, () => vault.connectDocs(ws, c)),
    disconnectDocs: (ws) => after(ws, () => vault.disconnectDocs(ws)),
    updateSettings: (ws, s) => after(ws, () => vault.updateSettings(ws, s)),
    markUninstalled: (ws) => after(ws, () => vault.markUninstalled(ws)),
  };
}

/** Bolt's installer refreshes a rotating token this long before it expires. */
const REFRESH_WINDOW_MS = 2 * 3_600_000;

/**
 * Until when an installation may be served from memory: never once Bolt would refresh one of
 * its tokens (a minute's margin), so a refresh always starts from the stored refresh token.
 */
export function installationFreshUntil(body: unknown): number {
  const b = body as { bot?: { expiresAt?: unknown }; user?: { expiresAt?: unknown } } | null;
  let until = Number.POSITIVE_INFINITY;
  for (const t of [b?.bot, b?.user])
    if (typeof t?.expiresAt === 'number')
      until = Math.min(until, t.expiresAt * 1000 - REFRESH_WINDOW_MS - 60_000);
  return until;
}

/**
 * The vault's installation lookup, kept a short while in `recent`: a copy each time (Bolt's
 * authorize writes refreshed tokens into what it is given). No installation is not kept.
 */
export function rememberingInstallations<V extends Pick<Vault, 'findInstallation'>>(
  vault: V,
  recent: Recent<Awaited<ReturnType<Vault['findInstallation']>>>,
): V {
  return {
    ...vault,
    async findInstallation(q) {
      const found = await recent.get(
        q,
        () => vault.findInstallation(q),
        (f) => (f ? installationFreshUntil(f.body) : 0),
      );
      return found && structuredClone(found);
    },
  };
}
