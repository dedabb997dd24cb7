/**
 * Issue 21, isolation: forged cross-workspace slash commands. Every command the app
 * registers (agent-command.ts, visitors-command.ts, insights-command.ts) and every word
 * `/agent` answers (sub-commands.ts: help, status, project, project <id>, project default,
 * doctor, and a prompt), run by BETA's person with ALPHA's channel id in the payload.
 *
 * Slack authorizes a command by its team, so every lookup is BETA's (its jobs, its channel
 * bindings, its docs project), and whatever is posted goes out with BETA's token, which
 * Slack refuses in ALPHA's channel: the person is told why (the invite hint), as in any
 * channel the bot cannot post in. Nothing of ALPHA changes (rows, its job at the API, no
 * Slack call with its token) and nothing of ALPHA's is read back to BETA. The real bot over
 * HTTP, on both engines.
 */
import { describe, expect, it } from 'vitest';
import { closeAfterEach, commandFrom } from '../helpers/distributed.ts';
import {
  A,
  type Alpha,
  alphaBefore,
  alphaUntouched,
  B,
  B_IN_A,
  refusedLines,
  toldThrough,
  twoWorkspaces,
} from '../helpers/forged.ts';
import type { Harness } from '../helpers/harness.ts';
import { eventually } from '../helpers/net.ts';
import { engineKinds } from '../helpers/store-engines.ts';

let h: Harness;
let alpha: Alpha;
closeAfterEach(() => h);

async function start(engine: 'sqlite' | 'postgres') {
  ({ h, alpha } = await twoWorkspaces(engine));
}

/** Whatever ALPHA's things look like in an answer: its job, prompt, project, people. */
const ALPHA_WORDS = /job_alpha|SSO|changelog|proj_alpha|U0A1|Alpha secret/;

/** BETA's person runs `command text` in ALPHA's channel; answers everything they were told. */
async function run(command: string, text: string, settled: (told: string) => boolean) {
  const res = await commandFrom(h, B_IN_A, text, command);
  expect(res.status).toBe(200);
  const told = () => `${JSON.stringify(res.body)} ${toldThrough(h, res.responseId)}`;
  await eventually(() => settled(told()), `${command} ${text} answered`, 10_000);
  return told();
}

describe.each(engineKinds)('distributed mode: forged commands (%s)', (engine) => {
  it("answers `/agent`'s words from BETA's own things, in ALPHA's channel", async () => {
    await start(engine);
    const before = await alphaBefore(h);
    const answers = [
      await run('/agent', 'help', (t) => t.includes('/agent')),
      await run('/agent', 'status', (t) => /job|budget/i.test(t)),
      await run('/agent', 'project', (t) => /project/.test(t)),
      await run('/agent', 'project proj_alpha', (t) => /admin|project/i.test(t)),
      await run('/agent', 'project default', (t) => /admin|default/i.test(t)),
      await run('/agent', 'doctor', (t) => t.length > 20 && !t.endsWith(' []')),
    ];
    for (const told of answers) expect(told).not.toMatch(ALPHA_WORDS);
    await alphaUntouched(h, before);
    expect(refusedLines(h)).toEqual([]);
  });

  it("starts BETA's job only, which Slack will not post in ALPHA's channel: the person is told", async () => {
    await start(engine);
    const before = await alphaBefore(h);
    const told = await run('/agent', 'Publish the roadmap', (t) => /invite|channel/i.test(t));
    expect(told).not.toMatch(ALPHA_WORDS);
    await eventually(
      () => h.logLines().find((l) => l.msg === 'job.root_post_failed'),
      'the root refused by Slack',
    );
    await alphaUntouched(h, before);
    // No job was created at the API for it, in ALPHA's project or any.
    expect(h.api.requestsTo('create')).toEqual([]);
    expect(alpha.active.teamId).toBe(A.team);
  });

  it("builds `/visitors` and `/insights` for BETA's project, and posts none in ALPHA's channel", async () => {
    await start(engine);
    const before = await alphaBefore(h);
    for (const command of ['/visitors', '/insights']) {
      const told = await run(command, '7d', (t) => /couldn|invite|channel|report/i.test(t));
      expect(told).not.toMatch(ALPHA_WORDS);
    }
    await alphaUntouched(h, before);
    // Whatever the API was asked, it was not of ALPHA's project nor with its key.
    const asked = h.api.requests.slice(before.api);
    expect(asked.filter((r) => r.path.includes('proj_alpha'))).toEqual([]);
    // Nothing was uploaded or posted anywhere with BETA's token either but in BETA's places.
    const posts = h.slack.calls
      .slice(before.calls)
      .filter((c) => /chat\.post|files\./.test(c.method) && c.status === 200);
    expect(posts.every((c) => c.team === B.team)).toBe(true);
  });
});
