import { ApiError } from '../api/errors.ts';
import type { Check } from './check.ts';

/**
 * The doctor's part for the workspace that asks, in distributed mode: its docs connection
 * (connected or not, and the project), a live check of its own key (one read of its project,
 * as the connect form's check, within a few seconds), and its budgets (its project's agent
 * uses, its organisation's analytics requests). Only that workspace's: the ports are bound
 * to it by the caller. The key is never read here, only used by the check; no line names it.
 */

/** A budget as the doctor says it (Budget.status()). */
export interface BudgetNow {
  limit: number;
  remaining: number;
  nextSlotAt: number | null;
}

/** The asking workspace's docs, as the doctor reads them. */
export interface WorkspaceDoctorPorts {
  /** Its connected project, or null; nothing secret. */
  connection(): Promise<{ projectId: string; connectedAt: number } | null>;
  /** One read of the project with the workspace's own key (throws the API's typed errors). */
  checkKey(): Promise<void>;
  /** The project's agent budget. */
  agentBudget(projectId: string): Promise<BudgetNow>;
  /** The workspace's organisation's analytics budget (named by its connected project). */
  analyticsBudget(projectId: string): Promise<BudgetNow>;
}

const APP_HOME = "Docs Agent's App Home";

/** The workspace's lines: its connection, its key's live check, its two budgets. */
export async function workspaceChecks(p: WorkspaceDoctorPorts): Promise<Check[]> {
  const name = 'Docs connection';
  let c: Awaited<ReturnType<WorkspaceDoctorPorts['connection']>>;
  try {
    c = await p.connection();
  } catch (err) {
    return [{ name, ok: false, detail: `could not read it (${reason(err)})`, fix: 'try again' }];
  }
  if (!c)
    return [
      {
        name,
        ok: false,
        detail:
          'no docs project is connected to this workspace, so every command answers with how to connect',
        fix: `a workspace admin connects one from ${APP_HOME} (Connect): the project id and an admin API key from the Mintlify dashboard`,
      },
    ];
  const day = new Date(c.connectedAt).toISOString().slice(0, 10);
  const connection: Check = { name, ok: true, detail: `project ${c.projectId}, connected ${day}` };
  const key = await checkKey(p, c.projectId);
  const budgets = await Promise.all([
    budgetCheck('Agent budget', () => p.agentBudget(c.projectId), {
      of: `project ${c.projectId}`,
      what: 'uses (jobs and follow-ups)',
    }),
    budgetCheck('Analytics budget', () => p.analyticsBudget(c.projectId), {
      of: 'your organisation',
      what: 'requests (reports, insights)',
    }),
  ]);
  return [connection, key, ...budgets];
}

async function checkKey(p: WorkspaceDoctorPorts, projectId: string): Promise<Check> {
  const name = 'Docs API key';
  const started = performance.now();
  try {
    await p.checkKey();
    const ms = Math.round(performance.now() - started);
    return {
      name,
      ok: true,
      detail: `accepted for project ${projectId} (one read of the project just now, ${ms} ms; no budget spent)`,
    };
  } catch (err) {
    return { name, ok: false, ...keyFailure(err, projectId) };
  }
}

function keyFailure(err: unknown, projectId: string) {
  const replace = `a workspace admin replaces the key from ${APP_HOME} (Replace key)`;
  if (!(err instanceof ApiError))
    return { detail: `could not check (${reason(err)})`, fix: 'try again in a minute' };
  switch (err.kind) {
    case 'unauthorized':
      return { detail: 'the key was rejected (401): wrong, revoked or expired', fix: replace };
    case 'forbidden':
      return {
        detail: `the key may not read project ${projectId} (403)`,
        fix: `${replace} with an admin key of the organisation that owns the project, and check the Mintlify API's IP allowlist`,
      };
    case 'not_found':
      return {
        detail: `the Mintlify API knows no project ${projectId} for this key (404)`,
        fix: `a workspace admin disconnects it and connects the right project from ${APP_HOME}`,
      };
    default:
      // A timeout, the API down, a rate limit: the client's words, which name no key.
      return { detail: `not checked: ${lowerFirst(err.message)}`, fix: 'try again in a minute' };
  }
}

async function budgetCheck(
  name: string,
  status: () => Promise<BudgetNow>,
  o: { of: string; what: string },
): Promise<Check> {
  try {
    const b = await status();
    if (b.remaining > 0 || b.nextSlotAt === null)
      return {
        name,
        ok: true,
        detail: `${b.remaining} of ${b.limit} ${o.what} left this hour for ${o.of}`,
      };
    const at = new Date(b.nextSlotAt).toISOString().slice(11, 16);
    return {
      name,
      ok: true,
      detail: `all ${b.limit} ${o.what} of the last hour are spent for ${o.of}; the next opens at ${at} UTC`,
    };
  } catch (err) {
    return { name, ok: false, detail: `could not read it (${reason(err)})`, fix: 'try again' };
  }
}

const lowerFirst = (s: string) => s.replace(/^The /, 'the ');

function reason(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0]?.slice(0, 200) ?? 'unknown';
}
