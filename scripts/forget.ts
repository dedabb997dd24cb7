/**
 * `npm run forget -- <team id> [--enterprise <enterprise id>] [--yes]`: forgets a workspace
 * of the distributed mode now, as UNINSTALL_RETENTION_DAYS after an uninstall would
 * (src/workspaces/forget-now.ts). Without --yes it only counts what it would delete. For an
 * Enterprise Grid org installed org-wide, `--enterprise E…` alone. Reads DATABASE_URL and
 * DATABASE_TIMEOUT_MS only (and .env, like `npm start`). Uninstall the app from the workspace
 * first: a workspace whose install is deleted here still has the app in Slack, refused.
 */
import { parseArgs } from 'node:util';
import { loadStorageConfig } from '../src/config/storage.ts';
import { createLogger, makeScrubber, urlSecrets } from '../src/log.ts';
import { openStore } from '../src/store/open.ts';
import { forgetWorkspaceNow } from '../src/workspaces/forget-now.ts';

const USAGE = 'usage: npm run forget -- <team id> [--enterprise <enterprise id>] [--yes]';
const ID = /^[TE][A-Z0-9]{2,}$/;
/** The sweep's lease on the forget while this runs (a bot replica leaves it alone meanwhile). */
const LEASE_MS = 60_000;

let args: ReturnType<typeof parse>;
function parse() {
  return parseArgs({
    allowPositionals: true,
    options: { enterprise: { type: 'string' }, yes: { type: 'boolean', default: false } },
  });
}
try {
  args = parse();
} catch (err) {
  console.log(`✗ ${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
  process.exit(1);
}
const teamId = args.positionals[0];
const enterpriseId = args.values.enterprise;
if (
  args.positionals.length > 1 ||
  (!teamId && !enterpriseId) ||
  [teamId, enterpriseId].some((id) => id !== undefined && !ID.test(id))
) {
  console.log(`✗ Name one workspace by its Slack ids (T…, E…).\n${USAGE}`);
  process.exit(1);
}
const ws = { teamId, enterpriseId };
const named = [teamId, enterpriseId].filter(Boolean).join(' in ');

const loaded = loadStorageConfig(process.env);
if (!loaded.ok) {
  for (const problem of loaded.problems) console.log(`✗ Configuration: ${problem}`);
  process.exit(1);
}
const { databaseUrl, databaseTimeoutMs } = loaded.config;
const secrets = urlSecrets(databaseUrl);
const scrub = makeScrubber(secrets);
const log = createLogger({ level: 'info', secrets });
const counts = (rows: Record<string, number>) =>
  Object.entries(rows)
    .map(([table, n]) => `${table} ${n}`)
    .join(', ');

let code = 0;
const store = await openStore(databaseUrl, log, { timeoutMs: databaseTimeoutMs }).catch(
  (err: unknown) => {
    console.log(`✗ Database: ${scrub(err instanceof Error ? err.message : String(err))}`);
    process.exit(1);
  },
);
try {
  if (!args.values.yes) {
    console.log(`${named} holds: ${counts(await store.workspaceRows(ws))}`);
    console.log('Nothing deleted. Run again with --yes to forget it now.');
  } else {
    const r = await forgetWorkspaceNow(store, ws, { log, now: Date.now, leaseMs: LEASE_MS });
    console.log(
      `${named}: ${r.installations} installation(s) and ${r.connections} docs connection(s) deleted, ${r.unwatched} job(s) unwatched; ${r.settled} forget(s) settled.`,
    );
    console.log(`before: ${counts(r.before)}`);
    console.log(`after:  ${counts(r.after)}`);
    if (Object.values(r.after).some((n) => n > 0)) {
      console.log(
        '✗ Some rows are left: the workspace is served by an installation (its org-wide one), or a bot replica holds its forget; see the lines above.',
      );
      code = 1;
    }
  }
} catch (err) {
  console.log(`✗ ${scrub(err instanceof Error ? err.message : String(err))}`);
  code = 1;
} finally {
  await store.close();
}
process.exit(code);
