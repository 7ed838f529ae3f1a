/**
 * The audit log (`audit_logs`): one immutable entry per audited request, kept in the `audit` database.
 * An entry names who, which route template, the outcome and ids; never personal data values, so the
 * log itself stays outside the data-subject export's personal fields.
 *
 * Stored ids sort by time (`audit:<created_at>:<audit_id>`), so a range read in id order is a read in
 * time order and a page cursor is simply the last id returned.
 */
import type * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import {
  boundedArray,
  boundedString,
  IsoInstant,
  isPlainObject,
  nullable,
  object,
  pageLimit,
  refine,
  ShortText,
  Uuid,
} from './codec.js';

export const AuditOutcome = t.keyof({ SUCCESS: null, FAILURE: null });
export type AuditOutcome = t.TypeOf<typeof AuditOutcome>;

/**
 * MUTATION: a write; READ_SENSITIVE: a read that returned personal or sensitive data; EXPORT: a
 * data-subject export; CONFLICT_RESOLVED: the event pipeline superseded an event (details name policy,
 * winner and loser); QUARANTINE: the pipeline set aside an event document it could not read.
 */
export const AuditAction = t.keyof({
  MUTATION: null,
  READ_SENSITIVE: null,
  EXPORT: null,
  CONFLICT_RESOLVED: null,
  QUARANTINE: null,
});
export type AuditAction = t.TypeOf<typeof AuditAction>;

// A string, not a literal, so the OpenAPI `pattern` carries no JavaScript-only `\/` escape.
// PIPELINE marks entries written by the event pipeline rather than by a request, JOB those of a
// periodic job (the service's own backup, 0044).
const ENDPOINT_PATTERN = '^(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS|PIPELINE|JOB) /[A-Za-z0-9._~{}/-]*$';
const ENDPOINT_RE = new RegExp(ENDPOINT_PATTERN);

/**
 * A route template such as `POST /api/v1/students/{studentId}`. A query string is refused because a
 * raw URL's query may carry personal data; a path with a concrete id still passes, which is why
 * callers take the template from the matched route, never from the request.
 */
export const AuditEndpoint = refine(
  t.string,
  (s) => s.length <= 200 && ENDPOINT_RE.test(s),
  'a route template (METHOD /path)',
  { pattern: ENDPOINT_PATTERN, maxLength: 200, examples: ['POST /api/v1/students/{studentId}'] },
);

const isJsonValue = (u: unknown, depth: number): boolean => {
  if (depth > 16) return false;
  if (u === null || typeof u === 'string' || typeof u === 'boolean') return true;
  if (typeof u === 'number') return Number.isFinite(u);
  if (Array.isArray(u)) return u.every((v) => isJsonValue(v, depth + 1));
  // A class instance (a Date, a Map) would not come back from the store as itself.
  const proto: unknown = isPlainObject(u) ? Object.getPrototypeOf(u) : undefined;
  if (isPlainObject(u) && (proto === Object.prototype || proto === null)) {
    return Object.values(u).every((v) => isJsonValue(v, depth + 1));
  }
  return false;
};

export const MAX_AUDIT_DETAILS_CHARS = 4096;

/**
 * Status, error code and ids. Only plain JSON survives a round trip through the store unchanged, and
 * the size bound keeps a request body from being dumped here by mistake.
 */
export const AuditDetails = refine(
  t.UnknownRecord,
  (d) => isJsonValue(d, 0) && JSON.stringify(d).length <= MAX_AUDIT_DETAILS_CHARS,
  `a JSON object of at most ${MAX_AUDIT_DETAILS_CHARS} characters`,
  { description: 'Status, error code and ids; never personal data values.' },
);
export type AuditDetails = t.TypeOf<typeof AuditDetails>;

const entryFields = {
  audit_id: Uuid,
  correlation_id: Uuid,
  /** Null for an anonymous caller (a failed login, a public route). */
  actor_user_id: nullable(ShortText),
  actor_role: nullable(ShortText),
  endpoint: AuditEndpoint,
  outcome: AuditOutcome,
  details: AuditDetails,
  created_at: IsoInstant,
  /** The student, user or consent the entry is about, for filtering and the data-subject export. */
  subject_id: nullable(ShortText),
  action: AuditAction,
};

export const AuditDoc = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('audit'),
  ...entryFields,
});
export type AuditDoc = t.TypeOf<typeof AuditDoc>;

/** What a caller hands to the log; the store adds the id and the time. */
export type NewAuditEntry = Omit<AuditDoc, '_id' | '_rev' | 'docType' | 'audit_id' | 'created_at'>;

export const auditDocId = (createdAt: string, auditId: string): string => `audit:${createdAt}:${auditId}`;

/**
 * The time and id of an entry its writer derives from what the entry records (a pipeline decision is
 * a function of the events alone). Two writers of the same decision (two instances, a replay after a
 * crash, a rebuild) then write the same document, and the log stores it once.
 */
export interface AuditKey {
  /** An ISO instant; stored with millisecond precision, as every entry's time is. */
  readonly at: string;
  /** A name-based UUID (version 5) of what the entry records. */
  readonly auditId: string;
}

/** An entry to append: fresh time and id when `key` is absent, the given ones when present. */
export interface PendingAuditEntry {
  readonly entry: NewAuditEntry;
  readonly key?: AuditKey;
}

export const AuditEntry = object('AuditEntry', entryFields);
export type AuditEntry = t.TypeOf<typeof AuditEntry>;

export const toAuditEntry = (doc: AuditDoc): AuditEntry => ({
  audit_id: doc.audit_id,
  correlation_id: doc.correlation_id,
  actor_user_id: doc.actor_user_id,
  actor_role: doc.actor_role,
  endpoint: doc.endpoint,
  outcome: doc.outcome,
  details: doc.details,
  created_at: doc.created_at,
  subject_id: doc.subject_id,
  action: doc.action,
});

export const MAX_AUDIT_PAGE_SIZE = 200;

export const AuditPage = object(
  'AuditPage',
  { items: boundedArray(AuditEntry, MAX_AUDIT_PAGE_SIZE), nextCursor: nullable(ShortText) },
  {},
  { description: 'Newest first. `nextCursor` is null on the last page.' },
);
export type AuditPage = t.TypeOf<typeof AuditPage>;

export const DEFAULT_AUDIT_PAGE_SIZE = 50;

/** `toAuditFilter` converts it to a number. */
export const AuditLimit = pageLimit(MAX_AUDIT_PAGE_SIZE, DEFAULT_AUDIT_PAGE_SIZE);

export const AuditQuery = object(
  'AuditQuery',
  {},
  {
    actor: boundedString(1, 200, { description: 'The userId of the actor.' }),
    endpoint: AuditEndpoint,
    outcome: AuditOutcome,
    subjectId: boundedString(1, 200),
    from: IsoInstant,
    to: IsoInstant,
    limit: AuditLimit,
    cursor: boundedString(1, 200, { description: 'The `nextCursor` of the previous page; opaque.' }),
  },
  {
    description: `\`from\` and \`to\` are inclusive. \`limit\` defaults to ${DEFAULT_AUDIT_PAGE_SIZE}.`,
  },
);
export type AuditQuery = t.TypeOf<typeof AuditQuery>;

/** A query of the log as the store takes it: every filter optional, `limit` a number from 1 to 200. */
export interface AuditFilter {
  readonly actor?: string;
  readonly endpoint?: string;
  readonly outcome?: AuditOutcome;
  readonly subjectId?: string;
  /** Inclusive bounds on `created_at`. */
  readonly from?: string;
  readonly to?: string;
  readonly limit: number;
  /** A `nextCursor` from an earlier page. */
  readonly cursor?: string;
}

export const toAuditFilter = (q: AuditQuery): AuditFilter => ({
  ...q,
  limit: q.limit === undefined ? DEFAULT_AUDIT_PAGE_SIZE : Number(q.limit),
});

/** A page cursor the log did not issue. */
export interface InvalidAuditCursor {
  readonly _tag: 'InvalidAuditCursor';
}

/**
 * The audit trail as its callers see it (the route path, the pipeline, the export); `src/store/auditLog.ts`
 * keeps it in the `audit` database.
 */
export interface AuditLog {
  /** Resolves once the entry is stored; rejects when it is invalid or its write failed. */
  append(entry: NewAuditEntry): Promise<void>;
  /**
   * Appends with the given time and id; resolves once an entry with that id is stored, whoever wrote
   * it. Rejects when the key is malformed, as for an invalid entry.
   */
  appendKeyed(entry: NewAuditEntry, key: AuditKey): Promise<void>;
  /** Newest first; `Left` only for a cursor this log did not issue. */
  query(filter: AuditFilter): Promise<E.Either<InvalidAuditCursor, AuditPage>>;
  /** Resolves once every entry appended before the call is settled. */
  flush(): Promise<void>;
  /** Writes what is queued and stops the writer; later appends reject. */
  close(): Promise<void>;
}
