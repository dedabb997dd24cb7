import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENV_VARIABLES } from '../src/config/config.ts';

/** The README, docs/, .env.example and compose.yaml are part of the contract: they must stay true. */
const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');

describe('documentation matches the code', () => {
  it('lists every configuration variable in the configuration table and in .env.example, and no other', () => {
    const table = read('docs/configuration.md');
    const tableRows = [...table.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);
    expect([...tableRows].sort()).toEqual([...ENV_VARIABLES].sort());
    const example = read('.env.example');
    const named = [...example.matchAll(/^#? ?([A-Z][A-Z_]+)=/gm)].map((m) => m[1]);
    // Besides the bot's own: what compose.yaml reads from .env for itself.
    const composeOnly = [...read('compose.yaml').matchAll(/\$\{([A-Z_]+)/g)].map((m) => m[1]);
    expect(composeOnly).toContain('POSTGRES_PASSWORD');
    expect([...new Set(named)].sort()).toEqual(
      [...new Set([...ENV_VARIABLES, ...composeOnly])].sort(),
    );
  });

  it('does not set DATABASE_URL in .env.example, so the Docker image keeps its /data path', () => {
    expect(read('.env.example')).not.toMatch(/^DATABASE_URL=/m);
    expect(read('Dockerfile')).toContain('DATABASE_URL=sqlite:/data/bot.sqlite');
  });

  it('starts the bot the same way from npm start and from the Docker image', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts
      .start;
    const dockerfile = read('Dockerfile');
    const flags = (s: string) => [...s.matchAll(/--[a-z-]+=\d+/g)].map((m) => m[0]);
    const entry = (s: string) => /\S+\.(?:js|ts)\b/.exec(s)?.[0];
    // glibc's malloc settings: `NAME=${NAME:-value}` in the script, `NAME=value` in the image.
    const malloc = (s: string) =>
      [...s.matchAll(/(MALLOC_[A-Z_]+)=(?:\$\{\1:-)?(\d+)/g)].map((m) => `${m[1]}=${m[2]}`).sort();
    const cmd = (JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)?.[1] ?? '[]') as string[]).join(' ');
    expect(flags(start)).not.toEqual([]);
    expect(flags(cmd)).toEqual(flags(start));
    expect(entry(start)).toBe('dist/main.js');
    expect(entry(cmd)).toBe(entry(start));
    expect(malloc(start)).not.toEqual([]);
    expect(malloc(dockerfile)).toEqual(malloc(start));
  });

  it('runs the compose replicas on the one PostgreSQL database', () => {
    const compose = read('compose.yaml');
    // Every bot service takes the shared definition, and with it the one database.
    expect(compose).toMatch(/^x-bot: &bot$/m);
    expect(compose).toMatch(/DATABASE_URL: postgres:\/\/bot@db:5432\/docs_agent_bot/);
    expect(bots(compose).length).toBeGreaterThanOrEqual(2);
    for (const b of bots(compose)) expect(b.body).toMatch(/^ {4}<<: \*bot$/m);
  });

  it('takes the database password from .env, never pastes it into a URL, and keeps each replica its /data', () => {
    const compose = read('compose.yaml');
    // Interpolated (compose reads .env for every command), not asked of the shell.
    const uses = [...compose.matchAll(/^\s*([A-Z_]+): (.*POSTGRES_PASSWORD.*)$/gm)];
    expect(uses.map((m) => m[1]).sort()).toEqual(['PGPASSWORD', 'POSTGRES_PASSWORD']);
    for (const m of uses)
      expect(m[2]).toMatch(/^\$\{POSTGRES_PASSWORD:\?set POSTGRES_PASSWORD in \.env\}$/);
    expect(compose).not.toMatch(/postgres:\/\/[^\s@]*:[^\s@]*@/); // no password in any URL
    expect(compose).not.toMatch(/POSTGRES_PASSWORD=… docker compose/);
    expect(read('.env.example')).toMatch(/^# POSTGRES_PASSWORD=$/m);
    // One named volume per replica (an anonymous one is dropped by `down`), declared at the top.
    const volumes = bots(compose).map((b) => /^ {6}- ([\w-]+):\/data$/m.exec(b.body)?.[1]);
    expect(volumes.every(Boolean)).toBe(true);
    expect(new Set(volumes).size).toBe(volumes.length);
    const declared = /^volumes:\n((?: {2}[\w-]+:\n?)+)/m.exec(compose)?.[1] ?? '';
    for (const v of volumes) expect(declared).toContain(`  ${v}:`);
  });
});

/** The bot services of compose.yaml (those built from this repository), each with its lines. */
function bots(compose: string): { name: string; body: string }[] {
  const services = compose.slice(compose.indexOf('\nservices:\n'));
  return [...services.matchAll(/^ {2}([\w-]+):\n((?: {4}.*\n|\s*\n)*)/gm)]
    .map((m) => ({ name: m[1]!, body: m[2]! }))
    .filter((s) => s.body.includes('<<: *bot') || /^ {4}build:/m.test(s.body));
}

describe('the README and docs/', () => {
  it('start with the two commands, then trying it, then setting it up, operating it and the reference', () => {
    const headings = [...read('README.md').matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(headings).toEqual([
      'The two commands',
      'What it does',
      'Try it in one minute, without Slack',
      'Set it up for real',
      'Operate it',
      'Reference',
      'Code map',
    ]);
    const readme = read('README.md');
    const two = readme.slice(readme.indexOf('## The two commands'));
    expect(/```sh\n(npm start .*)\n(npm test .*)\n```/.exec(two)).not.toBeNull();
    // Trying it needs no account: the steps are the fakes' own, and name no token.
    const tryIt = readme.slice(readme.indexOf('## Try it'), readme.indexOf('## Set it up'));
    expect(tryIt).toContain('npm run try');
    expect(tryIt).not.toMatch(/xoxb|xapp|mint_|cp \.env/);
  });

  it('link only to files and headings that exist', () => {
    const pages = ['README.md', ...readdirSync(docsDir).map((f) => `docs/${f}`)].filter((f) =>
      f.endsWith('.md'),
    );
    const broken: string[] = [];
    for (const page of pages) {
      for (const [, target] of read(page).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue; // https:, mailto:
        const [file, anchor] = target!.split('#');
        const resolved = file ? posix.normalize(posix.join(posix.dirname(page), file)) : page;
        if (!existsSync(new URL(`../${resolved}`, import.meta.url))) {
          broken.push(`${page} → ${target} (no file)`);
        } else if (anchor && resolved.endsWith('.md') && !slugs(read(resolved)).has(anchor)) {
          broken.push(`${page} → ${target} (no heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});

const docsDir = new URL('../docs/', import.meta.url);

/** GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces as dashes. */
function slugs(markdown: string): Set<string> {
  return new Set(
    [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
      m[1]!
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}
