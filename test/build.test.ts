import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { staleReason } from '../scripts/build.mjs';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A checkout with one source file and, when `built` is given, a build stamped then (s). */
function checkout(built?: number): string {
  dir = mkdtempSync(join(tmpdir(), 'build-test-'));
  mkdirSync(join(dir, 'src', 'jobs'), { recursive: true });
  writeFileSync(join(dir, 'src', 'jobs', 'poller.ts'), 'export {};\n');
  for (const f of ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'])
    writeFileSync(join(dir, f), '{}\n');
  const t = 1_700_000_000;
  for (const p of ['src/jobs/poller.ts', 'src/jobs', 'src', 'tsconfig.json'])
    utimesSync(join(dir, p), t, t);
  for (const p of ['tsconfig.build.json', 'package-lock.json']) utimesSync(join(dir, p), t, t);
  if (built !== undefined) {
    mkdirSync(join(dir, 'dist'));
    writeFileSync(join(dir, 'dist', '.built'), '');
    utimesSync(join(dir, 'dist', '.built'), built, built);
  }
  return dir;
}

it('builds a checkout that has no complete build (a fresh clone, or a build that failed)', () => {
  expect(staleReason(checkout())).toBe('dist/ has no complete build');
});

it('does not build again while no input changed, and does once a source did', () => {
  const root = checkout(1_700_000_100);
  expect(staleReason(root)).toBeUndefined();
  utimesSync(join(root, 'src', 'jobs', 'poller.ts'), 1_700_000_200, 1_700_000_200);
  expect(staleReason(root)).toBe('src changed since the last build');
});

it('builds again after a pull that changed only the build settings or the lockfile', () => {
  const root = checkout(1_700_000_100);
  utimesSync(join(root, 'package-lock.json'), 1_700_000_200, 1_700_000_200);
  expect(staleReason(root)).toBe('package-lock.json changed since the last build');
});
