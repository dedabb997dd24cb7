/**
 * Distributed mode, each connected workspace's weekly digest: in the channel its settings
 * name, on its schedule, of its project with its key, posted with its own token, claimed
 * under its workspace (two replicas post it once). The real bot over HTTP against the fake
 * Slack and the API emulator, on both engines.
 */
import { describe, expect, it } from 'vitest';
import { cronAt } from '../helpers/digest.ts';
import {
  A,
  ALPHA,
  ALPHA_KEY,
  B,
  BETA,
  BETA_KEY,
  bothInstalled,
  closeAfterEach,
  keyOf,
  vaultOf,
} from '../helpers/distributed.ts';
import type { Harness } from '../helpers/harness.ts';
import { eventually, sleep } from '../helpers/net.ts';
import { reportHeadlines } from '../helpers/reports.ts';
import { engineKinds } from '../helpers/store-engines.ts';

let h: Harness;
closeAfterEach(() => h);

describe.each(engineKinds)('distributed mode: each workspace its digest (%s)', (engine) => {
  it("posts each connected workspace's digest in its channel, with its key and token, once across replicas", async () => {
    h = await bothInstalled(engine, { start: { digest: { syncMs: 200 } } });
    const due = cronAt(new Date(Date.now() - 3_600_000));
    const sides = [
      { ...A, project: 'proj_alpha', key: ALPHA_KEY },
      { ...B, project: 'proj_beta', key: BETA_KEY },
    ];
    // Missed an hour ago: caught up as soon as the settings are read.
    for (const s of sides)
      await vaultOf(h).updateSettings(
        { teamId: s.team },
        { digestChannel: s.channel, digestCron: due },
      );
    // Another replica, reading the same settings at its start: it races for the same runs.
    await h.startReplica([]);
    for (const s of sides)
      await eventually(() => reportHeadlines(h.slack, s.channel).length === 1, s.team, 15_000);
    await sleep(1_000);
    for (const s of sides) {
      expect(reportHeadlines(h.slack, s.channel)).toHaveLength(1);
      // Posted with the workspace's own token; its data read with its own key, on its project.
      const posts = h.slack.callsTo('chat.postMessage').filter((c) => c.args.channel === s.channel);
      expect(posts.length).toBeGreaterThan(0);
      expect(posts.every((c) => c.team === s.team)).toBe(true);
      const reads = h.api.requests.filter((r) => r.path.includes(`/${s.project}/`));
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.every((r) => keyOf(r) === s.key)).toBe(true);
    }
    const started = h.logLines().filter((l) => l.msg === 'digests.workspace_started');
    expect(started.map((l) => l.teamId).sort()).toEqual([ALPHA.team, BETA.team]);
  });
});
