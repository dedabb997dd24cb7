import type { WorkspaceRef } from './records.ts';

/**
 * Whose the bot's own state is (migration 0019): the report cache, the report headline, the
 * insight gaps, the text vectors and the digest claims each belong to one workspace, and
 * every query of them names it.
 *
 * - Distributed mode: the team a request, an action or a workspace's digest came from (its
 *   Enterprise Grid org kept beside it). A team id names one workspace across Slack: rows
 *   are found by it.
 * - Single-workspace mode: SINGLE_WORKSPACE (team ''), whatever team a payload names, as the
 *   one workspace's state always was; the rows written before 0019 are its.
 */
export const SINGLE_WORKSPACE: WorkspaceRef = Object.freeze({ teamId: '' });

/** The workspace whose state a request's (or a digest's) workspace reads and writes. */
export type ScopeOf = (ws?: WorkspaceRef) => WorkspaceRef;

/** A state was asked for in distributed mode without a team: a bug, never a fallback. */
export class NoWorkspaceScope extends Error {
  constructor() {
    super("the bot's state is per workspace in distributed mode: a team id is needed");
    this.name = 'NoWorkspaceScope';
  }
}

/** Single-workspace mode: every request's state is the one workspace's. */
export const singleScope: ScopeOf = () => SINGLE_WORKSPACE;

/** Distributed mode: the request's own team (an org-level payload without one is refused). */
export const workspaceScope: ScopeOf = (ws) => {
  if (!ws?.teamId) throw new NoWorkspaceScope();
  return { teamId: ws.teamId, enterpriseId: ws.enterpriseId || null };
};

export const scopeFor = (distributed: boolean): ScopeOf =>
  distributed ? workspaceScope : singleScope;

/** The scope as the rows hold it ('' for none). */
export const scopeColumns = (ws: WorkspaceRef) => ({
  team_id: ws.teamId,
  enterprise_id: ws.enterpriseId ?? '',
});

/**
 * A key as a scoped row holds it. These tables keep the unique keys an older build upserts
 * on (a rolling deploy, a rollback: migration 0019 is additive), so a workspace's key carries
 * its team, and two workspaces' rows never meet on it; the single workspace's keys stay as
 * they were. Every query filters on team_id as well. A later contract step can make the
 * team part of these keys and drop the prefix.
 */
export const scopedKey = (ws: WorkspaceRef, key: string): string =>
  ws.teamId === '' ? key : `${ws.teamId}|${key}`;

/** The key a scoped row holds, as its workspace knows it. */
export const unscopedKey = (ws: WorkspaceRef, stored: string): string => {
  const prefix = ws.teamId === '' ? '' : `${ws.teamId}|`;
  return stored.startsWith(prefix) ? stored.slice(prefix.length) : stored;
};
