/**
 * `npm run build`: compiles src/ to plain JavaScript in dist/ (tsconfig.build.json), which is
 * what `npm start` and the Docker image run. Node could run src/*.ts itself, but its type
 * stripper keeps about 30 MB of resident memory for the life of the process.
 *
 * Emits without type checking (`noCheck`), so it takes seconds: `npm test` and CI check types.
 * `--if-stale` (run by `prestart`) builds only when dist/ is missing or older than a source,
 * so a fresh clone's `npm ci && npm start` works and a second start does not build again.
 * Plain JavaScript, like check-node.mjs: it runs before anything else.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
/** Written last: its time is the build's, and its absence means no complete build. */
export const STAMP = join(DIST, '.built');
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];

/** Newest modification time (ms) of `path`, a file or a directory walked recursively. */
function newest(path) {
  const s = statSync(path, { throwIfNoEntry: false });
  if (!s) return 0;
  if (!s.isDirectory()) return s.mtimeMs;
  let max = s.mtimeMs; // a deleted or renamed file changes its directory's time
  for (const e of readdirSync(path)) max = Math.max(max, newest(join(path, e)));
  return max;
}

/** Why dist/ must be built again, or undefined when it is up to date. */
export function staleReason(root = ROOT) {
  const stamp = statSync(join(root, 'dist', '.built'), { throwIfNoEntry: false });
  if (!stamp) return 'dist/ has no complete build';
  for (const input of INPUTS)
    if (newest(join(root, input)) > stamp.mtimeMs) return `${input} changed since the last build`;
  return undefined;
}

function tscPath() {
  try {
    return createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    return undefined;
  }
}

export function build() {
  const tsc = tscPath();
  if (!tsc) {
    process.stderr.write(
      'build: TypeScript is not installed (was it `npm ci --omit=dev`?). Run `npm ci`, then `npm run build`.\n',
    );
    return 1;
  }
  rmSync(DIST, { recursive: true, force: true });
  const run = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (run.status !== 0) {
    process.stderr.write('build: tsc failed; dist/ is incomplete.\n');
    return run.status ?? 1;
  }
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const ifStale = process.argv.includes('--if-stale');
  const reason = staleReason();
  if (ifStale && !reason) process.exit(0);
  if (ifStale) process.stderr.write(`build: ${reason}; building (npm run build)\n`);
  process.exit(build());
}
