/**
 * A strict reader of the Prometheus text exposition format (0.0.4): every line must be a
 * HELP, a TYPE or a sample, or parsing fails. Enough to prove what /metrics serves is
 * something Prometheus would take.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: -?\\d+)?$`);
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"(?:,|$)/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  const typed = new Map<string, string>();
  for (const [i, line] of text.split('\n').entries()) {
    const where = `line ${i + 1}: ${line}`;
    if (line === '') continue;
    if (line.startsWith('# HELP ')) {
      if (!new RegExp(`^# HELP ${NAME} `).test(line)) throw new Error(`bad HELP, ${where}`);
      continue;
    }
    if (line.startsWith('# TYPE ')) {
      const [, , name, type] = line.split(' ');
      if (!name || !type || !TYPES.has(type)) throw new Error(`bad TYPE, ${where}`);
      typed.set(name, type);
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample, ${where}`);
    samples.push({
      name: m[1]!,
      labels: parseLabels(m[2] ?? '', where),
      value: float(m[3]!, where),
    });
  }
  for (const s of samples) {
    const family = s.name.replace(/_(bucket|sum|count)$/, '');
    if (!typed.has(s.name) && !typed.has(family)) throw new Error(`no TYPE for ${s.name}`);
  }
  return samples;
}

/**
 * As Prometheus reads a value (Go's ParseFloat): NaN and Inf in any case, which matters
 * because prom-client writes NaN as `Nan`.
 */
function float(text: string, where: string): number {
  const special: Record<string, number> = {
    nan: NaN,
    inf: Infinity,
    '+inf': Infinity,
    '-inf': -Infinity,
  };
  const v = special[text.toLowerCase()] ?? Number(text);
  if (Number.isNaN(v) && text.toLowerCase() !== 'nan') throw new Error(`bad value, ${where}`);
  return v;
}

function parseLabels(text: string, where: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = text;
  while (rest.length > 0) {
    const m = LABEL.exec(rest);
    if (!m) throw new Error(`bad labels, ${where}`);
    labels[m[1]!] = m[2]!.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
    rest = rest.slice(m[0].length);
  }
  return labels;
}

/** The value of the one sample with this name and (at least) these labels. */
export function sampleValue(
  samples: Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found.length > 1) throw new Error(`${found.length} samples match ${name}`);
  return found[0]?.value;
}
