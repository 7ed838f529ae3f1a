/** Turns io-ts errors into the `details` of a VALIDATION_FAILED envelope (a separate step, as io-ts' own reporters). */
import type * as t from 'io-ts';

export type RequestPart = 'params' | 'query' | 'body' | 'headers';

export interface ValidationIssue {
  /** Where in the request, as `body.phones.0.number`. */
  readonly path: string;
  readonly message: string;
}

const describeExpected = (e: t.ValidationError): string => {
  if (e.message !== undefined) return e.message;
  const last = e.context[e.context.length - 1];
  return last === undefined ? 'invalid value' : `expected ${last.type.name}`;
};

export const toIssues = (part: RequestPart, errors: t.Errors): ValidationIssue[] => {
  const seen = new Set<string>();
  const issues: ValidationIssue[] = [];
  for (const e of errors) {
    const keys = e.context.map((c) => c.key).filter((k) => k !== '');
    const path = [part, ...keys].join('.');
    const message = describeExpected(e);
    const id = `${path}\u0000${message}`;
    // Unions report once per member; one line per place and message is enough for a client.
    if (!seen.has(id)) {
      seen.add(id);
      issues.push({ path, message });
    }
  }
  return issues;
};
