import { createRequire } from 'node:module';

/** One bar group on the x axis: a day ('Nov 15') or a week ('Nov 3–9'). */
export interface ChartPoint {
  label: string;
  human: number;
  ai: number;
}

export const CHART_WIDTH = 1000;
export const CHART_HEIGHT = 480;
/** Pixel box of the bars and grid; exported so tests sample the exact geometry drawn here. */
export const PLOT = { left: 72, right: 976, top: 84, bottom: 400 } as const;
/** Band holding only the title; the subtitle and legend share the line below it. */
export const TITLE_BAND = { top: 0, bottom: 44 } as const;
/** Okabe–Ito blue and orange: they stay distinct under the common colour-vision deficiencies. */
export const COLORS = { background: '#ffffff', human: '#0072b2', ai: '#e69f00' } as const;
const INK = '#111827';
const MUTED = '#6b7280';
const GRID = '#e5e7eb';
const AXIS = '#9ca3af';
const LABEL_MAX_CHARS = 18;

// The bot runs in a slim container without system fonts, and resvg silently drops text it has
// no font for, so Inter ships as an npm dependency and is the only font resvg may use. That also
// makes the output identical on every machine.
const require = createRequire(import.meta.url);
const FONT_FILES = [
  require.resolve('@expo-google-fonts/inter/400Regular/Inter_400Regular.ttf'),
  require.resolve('@expo-google-fonts/inter/700Bold/Inter_700Bold.ttf'),
];

/**
 * Round y-axis ticks from 0 covering `max`: the step is 1, 2 or 5 × 10^n, chosen so there are
 * about four intervals (ties go to the coarser step). Counts are whole, so the step is at least 1.
 */
export function niceTicks(max: number): number[] {
  if (!(max > 0) || !Number.isFinite(max)) return [0, 1];
  let step = 1;
  let bestDistance = Number.POSITIVE_INFINITY;
  // Candidates 1, 2, 5, 10, 20, 50, …, stopping at the first that covers max in one interval.
  for (let i = 0; ; i++) {
    const candidate = [1, 2, 5][i % 3]! * 10 ** Math.floor(i / 3);
    const distance = Math.abs(Math.ceil(max / candidate) - 4);
    if (distance <= bestDistance) {
      step = candidate;
      bestDistance = distance;
    }
    if (candidate >= max) break;
  }
  return Array.from({ length: Math.ceil(max / step) + 1 }, (_, i) => i * step);
}

/** Axis label: 950, 1.5k, 12k, 2.5M — short enough to fit left of the plot. */
export function formatCount(n: number): string {
  const oneDecimal = (x: number) => String(Number(x.toFixed(1)));
  if (n >= 1_000_000) return `${oneDecimal(n / 1_000_000)}M`;
  if (n >= 1_000) return `${oneDecimal(n / 1_000)}k`;
  return n.toLocaleString('en-US');
}

/** Left x and width of point `index`'s human and AI bars, on whole pixels so edges stay crisp. */
export function barSlots(
  count: number,
  index: number,
): { human: number; ai: number; width: number } {
  const group = (PLOT.right - PLOT.left) / count;
  const width = Math.max(2, Math.min(48, Math.floor((group * 0.72) / 2)));
  const center = Math.round(PLOT.left + group * (index + 0.5));
  return { human: center - width - 1, ai: center + 1, width };
}

/** Height in pixels of a bar; anything above zero stays visible even on a tall scale. */
export function barHeight(value: number, scaleMax: number): number {
  if (value <= 0) return 0;
  return Math.max(1, Math.round((value / scaleMax) * (PLOT.bottom - PLOT.top)));
}

function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function text(x: number, y: number, content: string, attrs: string): string {
  return `<text x="${x}" y="${y}" ${attrs}>${escapeXml(content)}</text>`;
}

function truncate(label: string): string {
  return label.length > LABEL_MAX_CHARS ? `${label.slice(0, LABEL_MAX_CHARS - 1)}…` : label;
}

function buildSvg(points: ChartPoint[], opts: { title: string; subtitle?: string }): string {
  // Garbage in (negative, NaN) must not draw upside-down bars or break the scale.
  const clean = (v: number) => (Number.isFinite(v) && v > 0 ? v : 0);
  const data = points.map((p) => ({
    label: truncate(p.label),
    human: clean(p.human),
    ai: clean(p.ai),
  }));
  const max = Math.max(0, ...data.flatMap((p) => [p.human, p.ai]));
  const ticks = max > 0 ? niceTicks(max) : [0];
  const scaleMax = ticks.at(-1) || 1;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${CHART_WIDTH}" height="${CHART_HEIGHT}" font-family="Inter">`,
    `<rect width="${CHART_WIDTH}" height="${CHART_HEIGHT}" fill="${COLORS.background}"/>`,
  ];
  if (opts.title)
    out.push(text(24, 34, opts.title, `font-size="20" font-weight="700" fill="${INK}"`));
  if (opts.subtitle) out.push(text(24, 62, opts.subtitle, `font-size="13" fill="${MUTED}"`));
  // Legend, right-aligned on the subtitle line so a long title never runs into it. An empty
  // chart has nothing to key, so it gets none.
  const legend = [
    [PLOT.right - 112, COLORS.human, 'Human'],
    [PLOT.right - 34, COLORS.ai, 'AI'],
  ] as const;
  for (const [x, color, name] of max > 0 ? legend : []) {
    out.push(`<rect x="${x}" y="51" width="12" height="12" rx="2" fill="${color}"/>`);
    out.push(text(x + 18, 62, name, `font-size="13" fill="${INK}"`));
  }

  for (const t of ticks) {
    const y = PLOT.bottom - barHeight(t, scaleMax) + 0.5;
    if (t > 0)
      out.push(`<line x1="${PLOT.left}" x2="${PLOT.right}" y1="${y}" y2="${y}" stroke="${GRID}"/>`);
    out.push(
      text(
        PLOT.left - 10,
        y + 4,
        formatCount(t),
        `font-size="12" text-anchor="end" fill="${MUTED}"`,
      ),
    );
  }

  if (max > 0) {
    data.forEach((p, i) => {
      const slot = barSlots(data.length, i);
      for (const [x, value, color] of [
        [slot.human, p.human, COLORS.human],
        [slot.ai, p.ai, COLORS.ai],
      ] as const) {
        const h = barHeight(value, scaleMax);
        if (h > 0) {
          out.push(
            `<rect x="${x}" y="${PLOT.bottom - h}" width="${slot.width}" height="${h}" fill="${color}"/>`,
          );
        }
      }
    });
  } else {
    const cx = (PLOT.left + PLOT.right) / 2;
    const cy = (PLOT.top + PLOT.bottom) / 2;
    out.push(
      text(
        cx,
        cy,
        'No visitors in this period',
        `font-size="16" text-anchor="middle" fill="${MUTED}"`,
      ),
    );
  }

  // Axes go on top of the bars so the baseline stays one continuous line.
  out.push(
    `<line x1="${PLOT.left - 0.5}" x2="${PLOT.left - 0.5}" y1="${PLOT.top}" y2="${PLOT.bottom + 1}" stroke="${AXIS}"/>`,
  );
  out.push(
    `<line x1="${PLOT.left - 0.5}" x2="${PLOT.right}" y1="${PLOT.bottom + 0.5}" y2="${PLOT.bottom + 0.5}" stroke="${AXIS}"/>`,
  );

  // x labels: shrink for many points, and tilt them when they would collide (≈0.56em per char).
  const group = (PLOT.right - PLOT.left) / Math.max(1, data.length);
  const fontSize = data.length > 10 ? 11 : 12;
  const widest = Math.max(0, ...data.map((p) => p.label.length)) * fontSize * 0.56;
  const tilt = widest > group - 8;
  data.forEach((p, i) => {
    const x = Math.round(PLOT.left + group * (i + 0.5));
    const y = PLOT.bottom + (tilt ? 14 : 22);
    const placement = tilt
      ? `text-anchor="end" transform="rotate(-35 ${x} ${y})"`
      : `text-anchor="middle"`;
    out.push(text(x, y, p.label, `font-size="${fontSize}" fill="${INK}" ${placement}`));
  });

  out.push('</svg>');
  return out.join('\n');
}

/** Renders the human-vs-AI visitors chart of a traffic report to a PNG, fonts and all, offline. */
export function renderVisitorsChart(
  points: ChartPoint[],
  opts: { title: string; subtitle?: string },
): { png: Buffer; width: number; height: number; svg: string } {
  const svg = buildSvg(points, opts);
  // The renderer (a native addon) loads on the first chart, not at every start.
  const { Resvg } = require('@resvg/resvg-js') as typeof import('@resvg/resvg-js');
  const image = new Resvg(svg, {
    font: { fontFiles: FONT_FILES, loadSystemFonts: false, defaultFontFamily: 'Inter' },
    fitTo: { mode: 'original' },
  }).render();
  return { png: image.asPng(), width: image.width, height: image.height, svg };
}
