import { describe, expect, it } from 'vitest';
import { BudgetExhausted } from '../src/api/errors.ts';
import { allPassed, formatChecks, runDoctor } from '../src/doctor/checks.ts';
import { API_COST, API_PROBE_EVERY_MS, probeOncePer } from '../src/doctor/wiring.ts';

/** A probe that counts its requests and answers as told. */
function countingProbe() {
  const asked: string[] = [];
  let fail: unknown;
  return {
    asked,
    failWith(err: unknown) {
      fail = err;
    },
    probe: async (projectId: string) => {
      asked.push(projectId);
      await new Promise((r) => setTimeout(r, 5));
      if (fail !== undefined) throw fail;
    },
  };
}

describe("the doctor's API probe", () => {
  it('asks the API at most once per 10 minutes, runs at the same time sharing the request', async () => {
    let now = 1_000_000;
    const p = countingProbe();
    const check = probeOncePer({ everyMs: API_PROBE_EVERY_MS, now: () => now, probe: p.probe });
    const first = await Promise.all(Array.from({ length: 20 }, () => check('proj_a')));
    expect(p.asked).toEqual(['proj_a']);
    expect(first.filter((r) => r === API_COST)).toHaveLength(1);
    now += 9 * 60_000;
    expect(await check('proj_a')).toBe(
      'result of the probe 9 min ago; the API is probed at most once every 10 minutes',
    );
    expect(p.asked).toHaveLength(1);
    now += 60_000;
    expect(await check('proj_a')).toBe(API_COST);
    expect(p.asked).toEqual(['proj_a', 'proj_a']);
  });

  it('keeps a failure as long as a success, and says it is an earlier result', async () => {
    let now = 0;
    const p = countingProbe();
    p.failWith(new Error('connect ECONNREFUSED'));
    const check = probeOncePer({ everyMs: API_PROBE_EVERY_MS, now: () => now, probe: p.probe });
    const ports = (projectId: string) => ({
      nodeVersion: 'v24.0.0',
      nodeRequired: 24,
      authTest: async () => ({ ok: true as const, scopes: ['commands'] }),
      openConnection: undefined,
      manifestScopes: async () => ['commands'],
      checkApi: () => check(projectId),
      projectId,
      database: async () => 'answers',
      databaseLabel: 'sqlite:x',
    });
    await runDoctor(ports('proj_a'));
    now += 2 * 60_000;
    const again = await runDoctor(ports('proj_a'));
    expect(allPassed(again)).toBe(false);
    expect(formatChecks(again)).toContainEqual(
      '✗ Mintlify API key and project proj_a: could not check (connect ECONNREFUSED) (result of the probe 2 min ago; the API is probed at most once every 10 minutes). Fix: see the README',
    );
    // Another project inside the window is not probed: it says when it can be.
    const other = formatChecks(await runDoctor(ports('proj_b')));
    expect(other).toContainEqual(
      expect.stringMatching(
        /^✗ Mintlify API key and project proj_b: not checked: the API was last probed 2 min ago, for another project .*Fix: run the doctor again after 00:10 UTC$/,
      ),
    );
    expect(p.asked).toEqual(['proj_a']);
  });

  it('does not keep a probe the analytics budget refused (it spent nothing)', async () => {
    const p = countingProbe();
    p.failWith(new BudgetExhausted('access.check', 'The analytics budget', new Date(0)));
    const check = probeOncePer({ everyMs: API_PROBE_EVERY_MS, now: () => 0, probe: p.probe });
    await expect(check('proj_a')).rejects.toBeInstanceOf(BudgetExhausted);
    p.failWith(undefined);
    expect(await check('proj_a')).toBe(API_COST);
    expect(p.asked).toHaveLength(2);
  });
});
