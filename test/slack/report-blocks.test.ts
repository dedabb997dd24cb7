import { describe, expect, it } from 'vitest';
import type { PageRow } from '../../src/api/schemas.ts';
import { change, type Mover } from '../../src/reports/aggregate.ts';
import type { Report } from '../../src/reports/service.ts';
import { pagePath } from '../../src/slack/page-links.ts';
import { formatChange, reportDetails, reportHeadline } from '../../src/slack/report-blocks.ts';
import { plainReport } from '../../src/slack/report-plain.ts';
import { slackLimitProblems } from '../helpers/slack-limits.ts';

const BASE = 'https://docs.acme.com';

function report(paths: string[], over: Partial<Report> = {}): Report {
  const rows: PageRow[] = paths.map((path, i) => ({
    path,
    human: 900 - i,
    ai: 90,
    total: 950 - i,
  }));
  const mover = (path: string, c: number, p: number): Mover => ({ path, ...change(c, p) });
  const counts = { human: 1_200, ai: 300, total: 1_400 };
  return {
    range: { from: '2026-11-01', to: '2026-11-08', days: 7, timeZone: 'Europe/Paris' },
    previous: { from: '2026-10-25', to: '2026-11-01', days: 7, timeZone: 'Europe/Paris' },
    totals: counts,
    previousTotals: { human: 1_000, ai: 0, total: 1_100 },
    changes: {
      human: change(1_200, 1_000),
      ai: change(300, 0),
      total: change(1_400, 1_100),
    },
    points: [],
    rows,
    previousRows: new Map(),
    top: rows.slice(0, 10),
    movers: {
      up: paths.slice(0, 5).map((p) => mover(p, 400, 100)),
      down: paths.slice(5, 10).map((p) => mover(p, 10, 300)),
    },
    scan: {
      current: { paths: 5_000, complete: false },
      previous: { paths: 4_000, complete: false },
      requests: 20,
      stoppedBy: 'cap',
    },
    generatedAt: 0,
    ...over,
  };
}

const sectionTexts = (blocks: unknown[]) =>
  blocks.flatMap((b) => {
    const t = (b as { type: string; text?: { text?: string } }).text?.text;
    return (b as { type: string }).type === 'section' && t ? [t] : [];
  });

describe('report blocks within Slack limits', () => {
  // Ten long `&`-heavy paths: escaping turns each `&` into five characters.
  const ampersands = Array.from({ length: 10 }, (_, i) => `/${i}/${'&'.repeat(300)}/end`);

  it.each([
    ['without links', undefined],
    ['with links', BASE],
  ])('keeps ten &-heavy paths within every limit (%s)', (_name, docsBaseUrl) => {
    const msg = reportDetails(report(ampersands), 'Docs traffic', { docsBaseUrl });
    expect(slackLimitProblems(msg)).toEqual([]);
    const texts = sectionTexts(msg.blocks);
    // Every top page and mover is there, each path cut after escaping (never half an entity).
    for (let i = 0; i < 10; i++) expect(texts.join('\n')).toContain(`/${i}/&amp;`);
    expect(texts.join('\n')).not.toMatch(/&am…|&a…|&…/);
  });

  it('keeps top pages within 3,000 characters even when their URLs are long', () => {
    const long = Array.from({ length: 10 }, (_, i) => `/${i}/${'a&b/'.repeat(220)}`);
    const msg = reportDetails(report(long), 'Docs traffic', { docsBaseUrl: BASE });
    expect(slackLimitProblems(msg)).toEqual([]);
    const top = sectionTexts(msg.blocks).filter((t) => /^\*Top pages\*|^\d+\. /.test(t));
    expect(top.join('\n').match(/^\d+\. /gm)).toHaveLength(10);
  });

  it('fits a plain fallback message within 4,000 characters', () => {
    const text = plainReport(report(ampersands), 'Docs traffic', { docsBaseUrl: BASE });
    expect(text.length).toBeLessThanOrEqual(4_000);
    expect(text).toContain('Docs traffic: Nov 1 – Nov 7, 2026');
    expect(text).toContain('Europe/Paris');
  });
});

describe('report text', () => {
  it('links every path in top pages and movers when DOCS_BASE_URL is set', () => {
    const paths = Array.from({ length: 10 }, (_, i) => `/guides/page-${i}`);
    const msg = reportDetails(report(paths), 'Docs traffic', { docsBaseUrl: BASE });
    const all = sectionTexts(msg.blocks).join('\n');
    for (const p of paths) expect(all).toContain(`<${BASE}${p}|${p}>`);
    expect(all.match(/<https:\/\/docs\.acme\.com\//g)).toHaveLength(20); // 10 top + 10 movers
  });

  it('never lets a path forge a link, mention or formatting break-out', () => {
    const evil = '/x|<https://evil.example|click here> <!channel> & `code`';
    const shown = pagePath(evil, BASE);
    expect(shown.startsWith(`<${BASE}/x%7C%3Chttps%3A/`)).toBe(true);
    expect(shown.match(/</g)).toHaveLength(1); // only the link's own opening bracket
    expect(shown.match(/>/g)).toHaveLength(1);
    expect(shown).not.toContain('<!channel>');
    expect(shown).toContain('&lt;!channel&gt; &amp;');
    const plain = pagePath(evil, undefined);
    expect(plain).not.toMatch(/[<>]/);
    expect(plain.slice(1, -1)).not.toContain('`');
  });

  it('has a plain text fallback and says which time zone the days are in', () => {
    const msg = reportDetails(report(['/a']), 'Docs traffic');
    expect(msg.text).toBe(
      'Top pages and biggest movers: Docs traffic: Nov 1 – Nov 7, 2026 (Europe/Paris): 1,400 unique visitors (1,200 human, 300 AI).',
    );
    expect(JSON.stringify(msg.blocks)).toContain('midnight to midnight, Europe/Paris time');
  });

  it('puts the totals one a line in a short headline that points to the thread', () => {
    const headline = reportHeadline(report(['/a']), 'Docs traffic');
    const lines = headline.split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[0]).toBe('*Docs traffic: Nov 1 – Nov 7, 2026* (Europe/Paris)');
    expect(lines[1]).toMatch(/^Humans \*1,200\* /);
    expect(lines[2]).toBe('AI agents *300* :new: +300 (new)');
    expect(lines[3]).toMatch(/^All visitors \*1,400\* /);
    expect(lines[4]).toContain('in the thread');
    expect(headline).not.toContain('Top pages*'); // the lists are in the thread
  });

  it('shows a new count with its number, not just "new"', () => {
    expect(formatChange(change(300, 0))).toBe(':new: +300 (new)');
    expect(formatChange(change(0, 0))).toBe('no change');
    expect(reportHeadline(report(['/a']), 'Docs traffic')).toContain(
      'AI agents *300* :new: +300 (new)',
    );
  });

  it('says plainly why there are no movers', () => {
    const partial = reportDetails(report(['/a'], { movers: { up: [], down: [] } }), 'T');
    expect(sectionTexts(partial.blocks).join('\n')).toContain(
      '*Biggest movers*\nNo page moved by 5+ visitors (with 20+ in either period) among the pages scanned in both periods',
    );
    const whole = report(['/a'], { movers: { up: [], down: [] } });
    whole.scan = {
      ...whole.scan,
      current: { paths: 1, complete: true },
      previous: { paths: 1, complete: true },
    };
    expect(sectionTexts(reportDetails(whole, 'T').blocks).join('\n')).toContain(
      '*Biggest movers*\nNo page moved by 5+ visitors (with 20+ in either period).',
    );
  });
});
