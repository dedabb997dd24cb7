import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import {
  barSlots,
  CHART_HEIGHT,
  CHART_WIDTH,
  type ChartPoint,
  COLORS,
  formatCount,
  niceTicks,
  PLOT,
  renderVisitorsChart,
  TITLE_BAND,
} from '../../src/reports/chart.ts';

type Rgb = readonly [number, number, number];

function rgb(hex: string): Rgb {
  const n = Number.parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

const WHITE = rgb(COLORS.background);
const HUMAN = rgb(COLORS.human);
const AI = rgb(COLORS.ai);

function decode(png: Buffer) {
  const img = PNG.sync.read(png);
  const at = (x: number, y: number): Rgb => {
    const i = (y * img.width + x) * 4;
    return [img.data[i]!, img.data[i + 1]!, img.data[i + 2]!];
  };
  const is = (x: number, y: number, c: Rgb) => at(x, y).every((v, k) => Math.abs(v - c[k]!) <= 2);
  /** Pixels in [x0, x1) × [y0, y1) matching `c`, or differing from the background when `c` is omitted. */
  const count = (x0: number, y0: number, x1: number, y1: number, c?: Rgb) => {
    let n = 0;
    for (let y = y0; y < y1; y++) {
      for (let x = x0; x < x1; x++) if (c ? is(x, y, c) : !is(x, y, WHITE)) n++;
    }
    return n;
  };
  /** Topmost row of the plot where column x has colour c, or undefined. */
  const barTop = (x: number, c: Rgb) => {
    for (let y = PLOT.top - 4; y <= PLOT.bottom; y++) if (is(x, y, c)) return y;
    return undefined;
  };
  return { img, is, count, barTop };
}

const week: ChartPoint[] = [
  { label: 'Nov 10', human: 1000, ai: 40 },
  { label: 'Nov 11', human: 600, ai: 300 },
  { label: 'Nov 12', human: 0, ai: 1 },
  { label: 'Nov 13', human: 250, ai: 0 },
];

describe('renderVisitorsChart', () => {
  it('produces a PNG of the advertised size', () => {
    const r = renderVisitorsChart(week, { title: 'Docs traffic', subtitle: 'Nov 10 – Nov 13' });
    const { img } = decode(r.png);
    expect([r.width, r.height]).toEqual([CHART_WIDTH, CHART_HEIGHT]);
    expect([img.width, img.height]).toEqual([CHART_WIDTH, CHART_HEIGHT]);
  });

  it('renders the title with the bundled font, and nothing there when the title is empty', () => {
    const band = [0, TITLE_BAND.top, CHART_WIDTH, TITLE_BAND.bottom] as const;
    const titled = decode(renderVisitorsChart(week, { title: 'Docs traffic' }).png);
    expect(titled.count(...band)).toBeGreaterThan(200);
    const untitled = decode(renderVisitorsChart(week, { title: '' }).png);
    expect(untitled.count(...band)).toBe(0);
  });

  it('draws human and AI bars to scale in their colours', () => {
    const { count, barTop, is } = decode(renderVisitorsChart(week, { title: 'T' }).png);
    const plot = [PLOT.left, PLOT.top, PLOT.right, PLOT.bottom] as const;
    expect(count(...plot, HUMAN)).toBeGreaterThan(1000);
    expect(count(...plot, AI)).toBeGreaterThan(1000);

    const mid = (i: number, bar: 'human' | 'ai') => {
      const s = barSlots(week.length, i);
      return s[bar] + Math.floor(s.width / 2);
    };
    // 1000 is the top tick, so the tallest bar spans the whole plot height.
    expect(barTop(mid(0, 'human'), HUMAN)).toBeLessThanOrEqual(PLOT.top + 2);
    // 40 of 1000 is a short bar; 300 sits in between.
    expect(barTop(mid(0, 'ai'), AI)).toBeGreaterThan(PLOT.bottom - 20);
    const ai300 = barTop(mid(1, 'ai'), AI)!;
    expect(ai300).toBeGreaterThan(PLOT.top + 150);
    expect(ai300).toBeLessThan(PLOT.bottom - 60);
    // A single visitor still shows as a sliver; zero draws nothing.
    expect(is(mid(2, 'ai'), PLOT.bottom - 1, AI)).toBe(true);
    expect(barTop(mid(2, 'human'), HUMAN)).toBeUndefined();
    expect(barTop(mid(3, 'ai'), AI)).toBeUndefined();
  });

  it('shows a "no visitors" message and no bars when everything is zero', () => {
    const zeros = week.map((p) => ({ ...p, human: 0, ai: 0 }));
    for (const points of [zeros, []]) {
      const r = renderVisitorsChart(points, { title: 'Docs traffic' });
      expect(r.svg).toContain('No visitors in this period');
      const { count } = decode(r.png);
      const cx = (PLOT.left + PLOT.right) / 2;
      const cy = (PLOT.top + PLOT.bottom) / 2;
      expect(count(cx - 120, cy - 20, cx + 120, cy + 10)).toBeGreaterThan(100);
      expect(count(0, 0, CHART_WIDTH, CHART_HEIGHT, HUMAN)).toBe(0);
      expect(count(0, 0, CHART_WIDTH, CHART_HEIGHT, AI)).toBe(0);
    }
    expect(renderVisitorsChart(week, { title: 'T' }).svg).not.toContain('No visitors');
  });

  it('fits 14 long labels and escapes markup in labels and titles', () => {
    const points = Array.from({ length: 14 }, (_, i) => ({
      label: `<&> Week of Nov ${i + 1} to Dec ${i + 7}`,
      human: 100 * i,
      ai: 40 * i,
    }));
    const r = renderVisitorsChart(points, { title: 'Tom & "Jerry" <docs>', subtitle: "it's" });
    expect(decode(r.png).img.width).toBe(CHART_WIDTH);
    expect(r.svg).toContain('&#60;&#38;&#62; Week');
    expect(r.svg).toContain('Tom &#38; &#34;Jerry&#34; &#60;docs&#62;');
    expect(r.svg).not.toMatch(/<&>|<docs>/);
  });
});

describe('niceTicks', () => {
  it('handles the documented cases', () => {
    expect(niceTicks(0)).toEqual([0, 1]);
    expect(niceTicks(-5)).toEqual([0, 1]);
    expect(niceTicks(Number.NaN)).toEqual([0, 1]);
    expect(niceTicks(1)).toEqual([0, 1]);
    expect(niceTicks(7)).toEqual([0, 2, 4, 6, 8]);
    expect(niceTicks(1234)).toEqual([0, 500, 1000, 1500]);
    expect(niceTicks(1000)).toEqual([0, 200, 400, 600, 800, 1000]);
  });

  it('always covers the max with 4–6 round ticks from zero', () => {
    for (const max of [3, 4, 9, 10, 11, 42, 99, 100, 101, 777, 5000, 12_345, 987_654, 3e7]) {
      const ticks = niceTicks(max);
      const step = ticks[1]!;
      expect(ticks[0]).toBe(0);
      expect(ticks.at(-1)).toBeGreaterThanOrEqual(max);
      expect(ticks.at(-2)).toBeLessThan(max);
      expect(ticks.length).toBeGreaterThanOrEqual(4);
      expect(ticks.length).toBeLessThanOrEqual(6);
      expect(step / 10 ** Math.floor(Math.log10(step))).toBeOneOf([1, 2, 5]);
      expect(ticks).toEqual(ticks.map((_, i) => i * step));
    }
  });
});

describe('formatCount', () => {
  it('keeps axis labels short', () => {
    expect([0, 950, 1000, 1500, 12_000, 2_500_000].map(formatCount)).toEqual([
      '0',
      '950',
      '1k',
      '1.5k',
      '12k',
      '2.5M',
    ]);
  });
});
