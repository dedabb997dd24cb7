/**
 * `npm run forget -- <team id> [--enterprise <enterprise id>] [--yes]`: forgets a workspace
 * of the distributed mode now, as UNINSTALL_RETENTION_DAYS after an uninstall would
 * (src/workspaces/forget-now.ts). Without --yes it only counts what it would delete. For an
 * Enterprise Grid org installed org-wide, `--enterprise E…` alone. Reads DATABASE_URL and
 * DATABASE_TIMEOUT_MS only (and .env, like `npm start`). Uninstall the app from the workspace
 * first: a workspace whose install is deleted here still has the app in Slack, refused.
 */
import { forgetWorkspaceNow } from '../src/workspaces/forget-now.ts';
import { fail, parseOrUsage, runOnStore, storageConfig } from './store-tool.ts';

const USAGE = 'usage: npm run forget -- <team id> [--enterprise <enterprise id>] [--yes]';
const ID = /^[TE][A-Z0-9]{2,}$/;
/** The sweep's lease on the forget while this runs (a bot replica leaves it alone meanwhile). */
const LEASE_MS = 60_000;

const args = parseOrUsage(
  {
    allowPositionals: true,
    options: { enterprise: { type: 'string' }, yes: { type: 'boolean', default: false } },
  },
  USAGE,
);
const teamId = args.positionals[0];
const enterpriseId = args.values.enterprise;
if (
  args.positionals.length > 1 ||
  (!teamId && !enterpriseId) ||
  [teamId, enterpriseId].some((id) => id !== undefined && !ID.test(id))
)
  fail(`✗ Name one workspace by its Slack ids (T…, E…).\n${USAGE}`);
const ws = { teamId, enterpriseId };
const named = [teamId, enterpriseId].filter(Boolean).join(' in ');

const counts = (rows: Record<string, number>) =>
  Object.entries(rows)
    .map(([table, n]) => `${table} ${n}`)
    .join(', ');

await runOnStore(storageConfig(), 'info', async (store, log) => {
  if (!args.values.yes) {
    console.log(`${named} holds: ${counts(await store.workspaceRows(ws))}`);
    console.log('Nothing deleted. Run again with --yes to forget it now.');
    return 0;
  }
  const r = await forgetWorkspaceNow(store, ws, { log, now: Date.now, leaseMs: LEASE_MS });
  console.log(
    `${named}: ${r.installations} installation(s) and ${r.connections} docs connection(s) deleted, ${r.unwatched} job(s) unwatched; ${r.settled} forget(s) settled.`,
  );
  console.log(`before: ${counts(r.before)}`);
  console.log(`after:  ${counts(r.after)}`);
  if (Object.values(r.after).every((n) => n === 0)) return 0;
  console.log(
    '✗ Some rows are left: the workspace is served by an installation (its org-wide one), or a bot replica holds its forget; see the lines above.',
  );
  return 1;
});
