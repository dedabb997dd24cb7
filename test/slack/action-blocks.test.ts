import { describe, expect, it } from 'vitest';
import { followUpModal, rootActions, statusReaction } from '../../src/slack/action-blocks.ts';
import { rootMessage } from '../../src/slack/blocks.ts';
import type { JobThread } from '../../src/store/types.ts';

const base: Pick<
  JobThread,
  | 'id'
  | 'userId'
  | 'prompt'
  | 'status'
  | 'jobId'
  | 'model'
  | 'repository'
  | 'ref'
  | 'prLink'
  | 'error'
> = {
  id: 7,
  userId: 'U1',
  prompt: 'Add a quickstart',
  status: 'active',
  jobId: 'job_1',
  model: null,
  repository: null,
  ref: null,
  prLink: null,
  error: null,
};
const ids = (t: Parameters<typeof rootActions>[0]) =>
  rootActions(t)?.elements.map((e) => (e as { action_id: string }).action_id) ?? [];

describe('root buttons', () => {
  it('offers what fits the state', () => {
    expect(ids(base)).toEqual(['job_follow_up', 'job_unwatch']);
    expect(ids({ ...base, unwatchedBy: 'U1' })).toEqual(['job_follow_up']);
    expect(ids({ ...base, status: 'completed', prLink: 'https://github.com/a/b/pull/1' })).toEqual([
      'job_view_pr',
      'job_follow_up',
    ]);
    expect(ids({ ...base, status: 'archived' })).toEqual([]);
    expect(ids({ ...base, status: 'lost' })).toEqual([]);
    const failedStart = { ...base, status: 'start_failed' as const, jobId: null };
    expect(ids({ ...failedStart, startRetry: 'safe' })).toEqual(['job_retry']);
    expect(ids({ ...failedStart, startRetry: null })).toEqual([]);
    // A root not recorded yet (no id) gets no button that acts on the thread.
    expect(ids({ ...base, id: undefined, status: 'starting', jobId: null })).toEqual([]);
  });

  it('asks first only when a retry may start a second job', () => {
    const failedStart = { ...base, status: 'start_failed' as const, jobId: null };
    const [safe] = rootActions({ ...failedStart, startRetry: 'safe' })?.elements ?? [];
    const [confirm] = rootActions({ ...failedStart, startRetry: 'confirm' })?.elements ?? [];
    expect(safe).not.toHaveProperty('confirm');
    expect(confirm).toHaveProperty('confirm');
  });

  it('leaves out a PR link Slack would refuse, and keeps the text fallback', () => {
    const long = `https://github.com/a/b/pull/1?${'x'.repeat(3_000)}`;
    expect(ids({ ...base, status: 'completed', prLink: long })).toEqual(['job_follow_up']);
    expect(ids({ ...base, status: 'completed', prLink: 'javascript:alert(1)' })).toEqual([
      'job_follow_up',
    ]);
    const m = rootMessage({
      ...base,
      status: 'completed',
      prLink: 'https://github.com/a/b/pull/1',
    });
    expect(m.text).toMatch(/^Completed: docs agent job for <@U1>/);
    expect(m.blocks.at(-1)).toMatchObject({ type: 'actions' });
    for (const b of rootActions({ ...base, status: 'completed', prLink: 'https://x.y/1' })
      ?.elements ?? [])
      expect((b as { text: { text: string } }).text.text.length).toBeLessThanOrEqual(75);
  });

  it('says on the root who stopped watching, in its status line', () => {
    const m = rootMessage({ ...base, unwatchedBy: 'U1' });
    const shown = JSON.stringify(m.blocks);
    expect(shown).toContain(':no_bell: *Not watched*');
    expect(shown).not.toContain('Working');
    expect(m.text).toMatch(/^Not watched: /);
    expect(shown).toContain('Cancelled by <@U1>');
    expect(JSON.stringify(m.blocks)).not.toContain('Reply in this thread to send');
  });
});

describe('status reaction', () => {
  it('follows the job', () => {
    expect(statusReaction({ status: 'starting' })).toBe('hourglass_flowing_sand');
    expect(statusReaction({ status: 'active' })).toBe('hourglass_flowing_sand');
    expect(statusReaction({ status: 'active', unwatchedBy: 'U1' })).toBe('no_bell');
    expect(statusReaction({ status: 'completed' })).toBe('white_check_mark');
    expect(statusReaction({ status: 'failed' })).toBe('x');
    expect(statusReaction({ status: 'start_failed' })).toBe('x');
    expect(statusReaction({ status: 'archived' })).toBe('file_cabinet');
  });
});

describe('follow-up form', () => {
  it('stays within Slack limits and escapes the prompt', () => {
    const v = followUpModal({ id: 7, prompt: `<!channel> ${'long '.repeat(1_000)}` });
    expect(v.title.text.length).toBeLessThanOrEqual(24);
    expect(v.submit?.text.length).toBeLessThanOrEqual(24);
    expect(JSON.parse(v.private_metadata ?? '')).toEqual({ threadId: 7 });
    const shown = JSON.stringify(v.blocks[0]);
    expect(shown).toContain('&lt;!channel&gt;');
    expect(shown.length).toBeLessThan(3_000);
  });
});
