/** Turns io-ts errors into the `details` of a VALIDATION_FAILED envelope (a separate step, as io-ts' own reporters). */
import * as t from 'io-ts';

export type RequestPart = 'params' | 'query' | 'body' | 'headers';

export interface ValidationIssue {
  /** Where in the request, as `body.phones.0.number`. */
  readonly path: string;
  readonly message: string;
}

/**
 * The `details` of a VALIDATION_FAILED envelope as a client reads them: the issues (capped, the rest
 * counted), and what a route adds beside (a `reason`; the headers of a file whose columns it could
 * not map). Open: a route may add more.
 */
export const ValidationDetails = t.intersection([
  t.type({ issues: t.array(t.type({ path: t.string, message: t.string })) }),
  t.partial({ issuesOmitted: t.number, reason: t.string, headers: t.array(t.string) }),
]);
export type ValidationDetails = t.TypeOf<typeof ValidationDetails>;

const describeExpected = (e: t.ValidationError): string => {
  if (e.message !== undefined) return e.message;
  const last = e.context[e.context.length - 1];
  return last === undefined ? 'invalid value' : `expected ${last.type.name}`;
};

/**
 * A union (such as `nullable(x)`) reports one error per member, under the member's index; the client
 * needs the field's path once, with the alternatives joined: `body.birthDate: expected a calendar date
 * YYYY-MM-DD or expected null`.
 */
export const toIssues = (part: RequestPart, errors: t.Errors): ValidationIssue[] => {
  const byPath = new Map<string, string[]>();
  for (const e of errors) {
    const keys = e.context
      .filter((c, i) => c.key !== '' && !(e.context[i - 1]?.type instanceof t.UnionType))
      .map((c) => c.key);
    const path = [part, ...keys].join('.');
    const messages = byPath.get(path) ?? [];
    const message = describeExpected(e);
    if (!messages.includes(message)) messages.push(message);
    byPath.set(path, messages);
  }
  return [...byPath.entries()].map(([path, messages]) => ({ path, message: messages.join(' or ') }));
};

/**
 * The first issues are enough to fix a request; a body of ten thousand unknown fields used to name
 * each of them (about 0.5 MB, several times the request). The count of the rest says the list is cut.
 */
export const MAX_REPORTED_ISSUES = 100;
/** Per event of a sync batch, which holds up to 500 of them. */
export const MAX_REPORTED_EVENT_ISSUES = 20;

export const capIssues = (
  issues: ReadonlyArray<ValidationIssue>,
  max: number,
): { issues: ValidationIssue[]; issuesOmitted?: number } =>
  issues.length <= max
    ? { issues: [...issues] }
    : { issues: issues.slice(0, max), issuesOmitted: issues.length - max };
