import { describe, expect, it } from 'vitest';
import { decodeSlackText, escapeMrkdwn, link, truncate } from '../../src/mrkdwn.ts';
import {
  AGENT_USAGE,
  announcementMessage,
  prName,
  type RootView,
  rootMessage,
} from '../../src/slack/blocks.ts';

const view = (over: Partial<RootView> = {}): RootView => ({
  userId: 'U1',
  prompt: 'Add a quickstart',
  status: 'active',
  jobId: 'job_1',
  model: 'claude-sonnet-4',
  repository: 'https://github.com/acme/docs',
  ref: 'main',
  prLink: null,
  error: null,
  ...over,
});

const allText = (m: { text: string; blocks: unknown[] }) => m.text + JSON.stringify(m.blocks);

describe('mrkdwn', () => {
  it('turns Slack markup into what a person reads', () => {
    expect(
      decodeSlackText(
        'see <https://x.io|docs>, <https://y.io>, <@U1>, <#C1|general>, <!here>, <!subteam^S1|@docs>, <mailto:a@b.c|a@b.c>',
      ),
    ).toBe('see docs (https://x.io), https://y.io, @U1, #general, @here, @docs, a@b.c');
  });

  it("decodes Slack's three entities back to what the person typed", () => {
    expect(decodeSlackText('wrap in &lt;Note&gt; &amp;amp; add &lt;!channel&gt;')).toBe(
      'wrap in <Note> &amp; add <!channel>',
    );
  });

  it('escapes the three control characters so text cannot ping or link', () => {
    expect(escapeMrkdwn('<!channel> & <https://x|y>')).toBe(
      '&lt;!channel&gt; &amp; &lt;https://x|y&gt;',
    );
  });
  it('truncates without splitting a surrogate pair', () => {
    expect(truncate('abcdef', 4)).toBe('abc…');
    expect(truncate('ab😀cd', 4)).toBe('ab…');
    expect(truncate('short', 10)).toBe('short');
  });
  it('keeps a link label from closing the link early', () => {
    expect(link('https://x/a|b', 'a > b')).toBe('<https://x/a%7Cb|a &gt; b>');
  });
});

describe('root message', () => {
  it('shows who asked, the prompt, and one short context row: status and repository@ref', () => {
    const m = rootMessage(view());
    const t = allText(m);
    for (const part of ['<@U1>', 'Add a quickstart', 'Working', 'acme/docs@main']) {
      expect(t).toContain(part);
    }
    // Developer detail is in the thread (the outcome's reply), not on the root.
    expect(t).not.toContain('claude-sonnet-4');
    expect(t).not.toContain('job_1');
    const [row] = m.blocks.filter((b) => b.type === 'context');
    expect(row).toMatchObject({ type: 'context', elements: [{ type: 'mrkdwn' }] });
    const rowText = (row as { elements: { text: string }[] }).elements[0]!.text;
    expect(rowText).toMatch(/^:gear: \*Working\* · /);
    // About one phone line: the status and the repo's label, not five facts.
    expect(rowText.replace(/<[^|>]*\|([^>]*)>/g, '$1').length).toBeLessThanOrEqual(40);
    expect(m.text).toMatch(/^Working: docs agent job for <@U1>/);
  });

  it('escapes a hostile prompt in the blocks and in the fallback', () => {
    const m = rootMessage(view({ prompt: 'hi <!channel> see <https://evil.example|docs> & more' }));
    const t = allText(m);
    expect(t).not.toContain('<!channel>');
    expect(t).not.toContain('<https://evil.example|docs>');
    expect(t).toContain('&lt;!channel&gt;');
    expect(t).toContain('&amp; more');
  });

  it.each([
    ['plain', 'x'.repeat(10_000)],
    ['ampersands (escaping grows them fivefold)', '&'.repeat(2_000)],
    ['MDX tags', '<b>'.repeat(900)],
    ['many short lines (quoting adds a character each)', 'a\n'.repeat(1_500)],
  ])('stays within the section limit for a long prompt: %s', (_name, prompt) => {
    const m = rootMessage(view({ prompt }));
    for (const b of m.blocks) {
      if (b.type === 'section' && b.text) {
        expect(b.text.text.length).toBeLessThanOrEqual(3000);
        expect(b.text.text).not.toMatch(/&[a-z]{0,3}…/); // no half entity at the cut
      }
    }
    expect(m.text.length).toBeLessThan(300);
    // The prompt itself survives the cut: most of the room is spent on it.
    const section = m.blocks[0];
    const shown = section?.type === 'section' ? (section.text?.text ?? '') : '';
    expect(shown.length).toBeGreaterThan(2_500);
  });

  it('links the pull request once there is one, and shows why a start failed', () => {
    const pr = 'https://github.com/acme/docs/pull/7';
    const done = rootMessage(view({ status: 'completed', prLink: pr }));
    // A button when the URL fits one, and not the same link twice.
    expect(JSON.stringify(done.blocks)).toContain(`"url":"${pr}"`);
    expect(allText(done)).not.toContain('View the pull request');
    const odd = rootMessage(view({ status: 'completed', prLink: 'git@github.com:acme/docs/7' }));
    expect(allText(odd)).toContain('View the pull request');
    const failed = allText(
      rootMessage(view({ status: 'start_failed', jobId: null, error: 'Budget <used> up' })),
    );
    expect(failed).toContain('Could not start');
    expect(failed).toContain('Budget &lt;used&gt; up');
  });
});

describe('announcements', () => {
  it('names the PR as owner/repo#N with its button, or says plainly that no files changed', () => {
    const done = announcementMessage(
      { key: 'k', kind: 'completed', prLink: 'https://github.com/a/b/pull/1' },
      { jobId: 'job_1', model: 'claude-sonnet-4' },
    );
    expect(done.text).toBe(
      'The agent opened a pull request: <https://github.com/a/b/pull/1|a/b#1>',
    );
    // No second status signal: the reaction and the root's status line tell it.
    expect(done.text).not.toContain(':white_check_mark:');
    expect(done.blocks[1]).toMatchObject({
      type: 'actions',
      elements: [{ type: 'button', url: 'https://github.com/a/b/pull/1', style: 'primary' }],
    });
    // The job's developer detail, in small print in the thread.
    expect(done.blocks[2]).toMatchObject({
      type: 'context',
      elements: [{ text: 'Job `job_1` · model claude-sonnet-4' }],
    });
    expect(prName('https://gitlab.com/acme/docs/-/merge_requests/7')).toBe('acme/docs!7');
    expect(prName('https://example.com/pr/9/')).toBe('example.com/pr/9');
    expect(announcementMessage({ key: 'k', kind: 'completed', prLink: null }).text).toContain(
      'No files were changed',
    );
    expect(announcementMessage({ key: 'k', kind: 'failed', prLink: null }).text).toContain(
      'failed',
    );
    expect(announcementMessage({ key: 'k', kind: 'archived', prLink: null }).text).toContain(
      'archived',
    );
    expect(announcementMessage({ key: 'k', kind: 'lost', prLink: null }).text).toContain('404');
  });
});

describe('usage', () => {
  it('shows its placeholders as text: no raw < or > that Slack would read as a link or ping', () => {
    expect(AGENT_USAGE).toContain('&lt;projectId&gt;');
    expect(AGENT_USAGE).not.toMatch(/[<>]/);
  });
});
