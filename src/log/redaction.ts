/**
 * The logger's redaction, compiled once. pino 10 hands its `redact` paths to `@pinojs/redact`, which
 * parses every path again for every key of every line: with two paths per personal student field
 * that was about a tenth of a check-in's allocation (decision 0019). The paths this service needs are
 * of three shapes only, so they become sets looked up per key, and a line without a listed key costs
 * one pass over its top-level keys and is not copied.
 *
 * Path shapes: `key` (a top-level key), `parent.key` (a key of one named top-level object) and
 * `*.key` (that key in any top-level object). The logged object is never changed; a censored line
 * is a copy.
 */
export type Redaction = (line: Record<string, unknown>) => Record<string, unknown>;

export const compileRedaction = (paths: readonly string[], censor: string): Redaction => {
  const topLevel = new Set<string>();
  const inAnyObject = new Set<string>();
  const inNamedObject = new Map<string, Set<string>>();
  for (const path of paths) {
    const parts = path.split('.');
    const [parent, key] = parts;
    if (parts.length === 1 && parent !== undefined && parent !== '' && parent !== '*') {
      topLevel.add(parent);
    } else if (
      parts.length === 2 &&
      parent !== undefined &&
      parent !== '' &&
      key !== undefined &&
      key !== '' &&
      key !== '*'
    ) {
      if (parent === '*') inAnyObject.add(key);
      else inNamedObject.set(parent, (inNamedObject.get(parent) ?? new Set<string>()).add(key));
    } else {
      // Deeper paths and wildcards in other places would silently redact nothing: refuse them.
      throw new Error(`unsupported redaction path: ${path}`);
    }
  }

  const censorObject = (value: object, named: Set<string> | undefined): object | undefined => {
    let copy: Record<string, unknown> | undefined;
    for (const key of Object.keys(value)) {
      if (inAnyObject.has(key) || named?.has(key) === true) {
        // Same prototype, as pino's own redaction keeps it: an Error stays an Error for its serializer.
        const target: Record<string, unknown> =
          copy ?? Object.assign(Object.create(Object.getPrototypeOf(value)), value);
        target[key] = censor;
        copy = target;
      }
    }
    return copy;
  };

  return (line) => {
    let out: Record<string, unknown> | undefined;
    for (const key of Object.keys(line)) {
      const value = line[key];
      if (value === undefined) continue;
      if (topLevel.has(key)) {
        out ??= { ...line };
        out[key] = censor;
      } else if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        const censored = censorObject(value, inNamedObject.get(key));
        if (censored !== undefined) {
          out ??= { ...line };
          out[key] = censored;
        }
      }
    }
    return out ?? line;
  };
};
