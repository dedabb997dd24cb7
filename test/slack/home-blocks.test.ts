import { describe, expect, it } from 'vitest';
import { budgetBlocks, HOME_JOBS, type HomeJob, homeView } from '../../src/slack/home-blocks.ts';

const job = (i: number): HomeJob => ({
  thread: {
    channelId: 'C1',
    threadTs: `1.${i}`,
    prompt: `<!channel> job ${i} <https://evil.example|click>`,
    status: 'failed',
    prLink: null,
    createdAt: 1_767_000_000_000,
    jobId: `job_${i}`,
  },
  permalink: `https://acme.slack.com/archives/C1/p1${i}`,
});

describe('homeView', () => {
  it('caps the jobs, stays within the 100-block limit of a view, and escapes prompts', () => {
    const v = homeView({
      jobs: Array.from({ length: 60 }, (_, i) => job(i)),
      budgets: [
        { projectId: 'proj_docs', limit: 100, remaining: 0, nextSlotAt: 1_767_000_060_000 },
      ],
      report: undefined,
      now: 1_767_000_000_000,
    });
    expect(v.type).toBe('home');
    expect(v.blocks.length).toBeLessThanOrEqual(100);
    const text = JSON.stringify(v.blocks);
    expect(text).toContain(`job ${HOME_JOBS - 1}`);
    expect(text).not.toContain(`job ${HOME_JOBS} `);
    expect(text).not.toContain('<!channel>');
    expect(text).toContain('&lt;!channel&gt;');
    expect(text).not.toContain('<https://evil.example|click>');
  });

  it('shows a meter per project, and when the next slot opens once a budget is spent', () => {
    const blocks = budgetBlocks([
      { projectId: 'proj_docs', limit: 100, remaining: 0, nextSlotAt: 1_767_000_060_000 },
      { projectId: 'proj_blog', limit: 100, remaining: 3, nextSlotAt: null },
    ]);
    expect(blocks).toHaveLength(1);
    const [spent, low] = ((blocks[0] as { text: { text: string } }).text.text ?? '').split('\n');
    expect(spent).toContain('Agent budget of `proj_docs`:* ▱▱▱▱▱▱▱▱▱▱ all 100 uses');
    expect(spent).toContain('<!date^1767000060^at {time}|');
    expect(low).toContain('Agent budget of `proj_blog`:* ▰▱▱▱▱▱▱▱▱▱ 3 of 100 uses left');
  });
});
