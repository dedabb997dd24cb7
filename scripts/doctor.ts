/**
 * `npm run doctor`: checks the configuration in the environment (and .env, read like
 * `npm start` reads it) against the world: Node, Slack's tokens and scopes, the Mintlify key
 * and project, the database. One line per check; exits 1 when any fails. Never prints a secret.
 */
import { ApiClient } from '../src/api/client.ts';
import { createBudgets } from '../src/app/budgets.ts';
import { loadConfig } from '../src/config/config.ts';
import { envWorkspace } from '../src/config/distribution.ts';
import { configSecrets } from '../src/config/values.ts';
import { allPassed, describeMode, formatChecks, runDoctor } from '../src/doctor/checks.ts';
import { API_COST, doctorPorts, redactSecrets } from '../src/doctor/wiring.ts';
import { createLogger } from '../src/log.ts';
import { openStore } from '../src/store/open.ts';
import type { Store } from '../src/store/types.ts';
import { describeKeys } from '../src/workspaces/key-check.ts';

const loaded = loadConfig(process.env);
if (!loaded.ok) {
  for (const problem of loaded.problems) console.log(`✗ Configuration: ${problem}`);
  console.log(
    'Fix the configuration (see .env.example and the README), then run the doctor again.',
  );
  process.exit(1);
}
const config = loaded.config;
const log = createLogger({ level: 'silent', secrets: configSecrets(config) });

let store: Store | undefined;
let opening: Promise<Store> | undefined;
// Opening applies any pending migration, as a start would: after it the schema is current.
const opened = () =>
  (opening ??= openStore(config.databaseUrl, log).then((s) => {
    store = s;
    return s;
  }));
const database = async () => {
  await (await opened()).ping();
  return 'opened, answers, schema migrated to the latest version';
};
// Single-workspace mode only: in distributed mode the doctor checks no API key (each
// workspace connects its own), and runDoctor does not call this.
const checkApi = async () => {
  const workspace = envWorkspace(config);
  if (!workspace) throw new Error('distributed mode: each workspace connects its own docs key');
  const api = new ApiClient({
    baseUrl: config.api.baseUrl,
    apiKey: workspace.apiKey,
    projectId: workspace.projectId,
    log,
    ...(store ? { budgets: createBudgets(config, store) } : {}),
  });
  await api.checkAccess();
  return API_COST;
};
// Distributed mode: how many workspaces are installed, and whether ENCRYPTION_KEYS opens
// what the database holds (the check a start makes).
const distributed = config.distribution
  ? {
      installedWorkspaces: async () => (await (await opened()).listInstallations()).length,
      keyCheck: async () => describeKeys(await opened(), config.workspaces.encryptionKeys),
    }
  : {};

console.log('Docs Agent doctor');
const ports = doctorPorts({ config, checkApi, database, ...distributed });
console.log(await describeMode(ports));
const checks = await runDoctor(ports);
for (const line of redactSecrets(formatChecks(checks), configSecrets(config))) console.log(line);
await store?.close();
const ok = allPassed(checks);
console.log(ok ? 'All checks passed.' : 'Some checks failed: see the fixes above.');
process.exit(ok ? 0 : 1);
