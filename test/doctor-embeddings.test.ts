import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.ts';
import { configSecrets } from '../src/config/values.ts';
import { formatChecks, runDoctor } from '../src/doctor/checks.ts';
import { doctorPorts, redactSecrets } from '../src/doctor/wiring.ts';
import { FakeEmbeddings } from './fakes/embeddings.ts';

/** The doctor's line for INSIGHTS_EMBEDDINGS_URL: off, or one text asked of the endpoint. */

const KEY = 'team-embeddings-credential-0123456789';
const base = {
  SLACK_BOT_TOKEN: 'xoxb-doctor-test',
  SLACK_SIGNING_SECRET: 'doctor-signing-secret',
  SLACK_API_URL: 'http://127.0.0.1:9/api/',
  MINTLIFY_API_KEY: 'mint_doctor_key',
  MINTLIFY_PROJECT_ID: 'proj_doc',
};
let fake: FakeEmbeddings;
beforeEach(async () => {
  fake = await FakeEmbeddings.start({ key: KEY });
});
afterEach(() => fake.close());

async function embeddingsLine(env: Record<string, string>): Promise<string> {
  const loaded = loadConfig({ ...base, ...env });
  if (!loaded.ok) throw new Error(loaded.problems.join('\n'));
  const config = loaded.config;
  const checks = await runDoctor(
    doctorPorts({ config, checkApi: async () => 'ok', database: async () => 'ok' }),
  );
  const lines = redactSecrets(formatChecks(checks), configSecrets(config));
  return lines.find((l) => l.includes('Embeddings endpoint'))!;
}

describe('doctor: embeddings endpoint', () => {
  it('says it is off when INSIGHTS_EMBEDDINGS_URL is unset, and asks nothing', async () => {
    expect(await embeddingsLine({})).toBe(
      '✓ Embeddings endpoint: off (INSIGHTS_EMBEDDINGS_URL unset): questions are grouped by their words',
    );
    expect(fake.requests).toHaveLength(0);
  });

  it('asks the endpoint for one text, once, and says what answered', async () => {
    const line = await embeddingsLine({
      INSIGHTS_EMBEDDINGS_URL: fake.url,
      INSIGHTS_EMBEDDINGS_KEY: KEY,
    });
    expect(line).toMatch(
      /^✓ Embeddings endpoint: text-embedding-3-small answered a vector of 64 dimensions in \d+ ms \(one request of one text; no analytics request, no agent use\)$/,
    );
    expect(fake.requests.map((r) => r.texts.length)).toEqual([1]);
  });

  it('names what failed and its fix, without the key', async () => {
    const refused = await embeddingsLine({
      INSIGHTS_EMBEDDINGS_URL: fake.url,
      INSIGHTS_EMBEDDINGS_KEY: 'wrong-credential-0123456789',
    });
    expect(refused).toBe(
      '✗ Embeddings endpoint: The embeddings endpoint rejected the key: it is wrong or has expired (check INSIGHTS_EMBEDDINGS_KEY); until it answers, questions are grouped by their words. Fix: set INSIGHTS_EMBEDDINGS_KEY to a key the endpoint accepts',
    );
    const wrongPath = await embeddingsLine({
      INSIGHTS_EMBEDDINGS_URL: fake.url.replace(/\/v1$/, ''),
      INSIGHTS_EMBEDDINGS_KEY: KEY,
    });
    expect(wrongPath).toMatch(
      /^✗ Embeddings endpoint: .*not found.* Fix: set INSIGHTS_EMBEDDINGS_URL to the base URL/,
    );
    fake.inject({ kind: 'status', status: 503 });
    const down = await embeddingsLine({
      INSIGHTS_EMBEDDINGS_URL: fake.url,
      INSIGHTS_EMBEDDINGS_KEY: KEY,
    });
    expect(down).toMatch(
      /^✗ Embeddings endpoint: The embeddings endpoint answered 503; .* Fix: check that this machine reaches/,
    );
    for (const l of [refused, wrongPath, down]) expect(l).not.toContain(KEY);
  });
});
