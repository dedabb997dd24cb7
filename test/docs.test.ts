import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENV_VARIABLES } from '../src/config.ts';

/** The README, .env.example and compose.yaml are part of the contract: they must stay true. */
const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');

describe('documentation matches the code', () => {
  it('lists every configuration variable in the README table and in .env.example, and no other', () => {
    const readme = read('README.md');
    const tableRows = [...readme.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);
    expect([...tableRows].sort()).toEqual([...ENV_VARIABLES].sort());
    const example = read('.env.example');
    const named = [...example.matchAll(/^#? ?([A-Z][A-Z_]+)=/gm)].map((m) => m[1]);
    expect([...new Set(named)].sort()).toEqual([...ENV_VARIABLES].sort());
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
    expect(compose).toMatch(/DATABASE_URL: postgres:\/\/bot:.*@db:5432\/docs_agent_bot/);
    expect(compose).toMatch(/replicas: 2/);
  });
});
