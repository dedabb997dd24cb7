/**
 * Runs before `npm start` and `npm test` (prestart, pretest), in plain JavaScript so that it
 * runs on any Node: an older one would otherwise fail with errors that never name the
 * version (`Unknown file extension ".ts"`, `Map.groupBy is not a function`).
 */
import { readFileSync } from 'node:fs';

/** The major version `engines.node` asks for (`>=24` → 24). */
export function requiredMajor(engines) {
  const m = /(\d+)/.exec(engines ?? '');
  return m ? Number(m[1]) : 0;
}

/** Undefined when `version` will do; otherwise what to tell the reader. */
export function nodeProblem(version, engines, execPath) {
  const need = requiredMajor(engines);
  const major = Number(/^v?(\d+)/.exec(version)?.[1] ?? 0);
  if (major >= need) return undefined;
  return [
    `This bot needs Node ${need} or newer; this is Node ${version} (${execPath}).`,
    `Install Node ${need} (for example \`nvm install ${need}\`), or without a version manager:`,
    `  npm install --prefix ~/.node${need} node@${need}`,
    `  export PATH=~/.node${need}/node_modules/.bin:$PATH`,
    'then run `npm ci` again.',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const problem = nodeProblem(process.version, pkg.engines?.node, process.execPath);
  if (problem) {
    process.stderr.write(`${problem}\n`);
    process.exit(1);
  }
}
