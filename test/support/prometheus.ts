/**
 * Reads Prometheus's text exposition format (what `/metrics` answers) into samples, so tests compare
 * numbers rather than lines.
 */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const SAMPLE_RE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL_RE = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export const parseExposition = (text: string): ReadonlyArray<Sample> =>
  text.split('\n').flatMap((line): Sample[] => {
    const match = SAMPLE_RE.exec(line);
    if (match === null || line.startsWith('#')) return [];
    const [, name = '', labelText = '', value = ''] = match;
    const labels: Record<string, string> = {};
    for (const [, key = '', raw = ''] of labelText.matchAll(LABEL_RE))
      labels[key] = raw.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    return [{ name, labels, value: Number(value) }];
  });

/** The sum of the samples named `name` whose labels include `labels`; 0 when there is none. */
export const sampleSum = (
  samples: ReadonlyArray<Sample>,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
