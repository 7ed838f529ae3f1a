/**
 * The one catalogue of error codes: each code with its HTTP status and default message. Handlers and
 * middleware produce `ApiError` values; only the error handler turns them into the envelope.
 */
import * as t from 'io-ts';
import { anonymousObject, object, Text, Uuid } from './codec.js';

export const errorCatalogue = {
  VALIDATION_FAILED: { status: 400, message: 'The request is not valid.' },
  UNAUTHORIZED: { status: 401, message: 'Authentication is missing or invalid.' },
  SESSION_EXPIRED: { status: 401, message: 'The session has expired; sign in again.' },
  COMPROMISED_SESSION: { status: 401, message: 'The refresh token was reused; every session was revoked.' },
  FORBIDDEN_ROLE: { status: 403, message: 'Your role does not allow this action.' },
  CSRF_TOKEN_INVALID: {
    status: 403,
    message: 'The X-CSRF-Token header is missing or does not match the session.',
  },
  CHECKOUT_CODE_MISMATCH: { status: 400, message: 'The pickup code does not match.' },
  PICKUP_NOT_AUTHORIZED: { status: 403, message: "This adult is not on the child's pickup list." },
  NOT_FOUND: { status: 404, message: 'The resource does not exist.' },
  CONFLICT: { status: 409, message: 'The request conflicts with the current state.' },
  CONFLICT_SUPERSEDED: { status: 409, message: 'A higher-precedence change superseded this one.' },
  IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_PAYLOAD: {
    status: 409,
    message: 'This Idempotency-Key was already used with a different request.',
  },
  ALREADY_SEEDED: { status: 409, message: 'The database already holds users.' },
  NO_FAMILY: {
    status: 409,
    message: 'The child has no guardian phone, so no family and no family pass.',
  },
  // The admission rule's refusals (`rules/admission.ts`); an ADMIN may override each with a justification.
  ROOM_FULL: {
    status: 409,
    message: 'The room holds its capacity; an ADMIN may override with a justification.',
  },
  RATIO_EXCEEDED: {
    status: 409,
    message: 'One more child would need more volunteers than are in the room; check a volunteer in first.',
  },
  AGE_OUT_OF_RANGE: { status: 409, message: "The child's age is outside the class's age range." },
  RECORD_INCOMPLETE: {
    status: 409,
    message: "The child's record lacks fields required before check-in; `details.missing` names them.",
  },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is larger than allowed.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'The request body encoding is not supported.' },
  REQUEST_TIMEOUT: { status: 408, message: 'The request took too long to arrive.' },
  HEADERS_TOO_LARGE: { status: 431, message: 'The request headers are larger than allowed.' },
  CHECKOUT_LOCKED: {
    status: 423,
    message: 'Check-out is locked after too many wrong codes; use an emergency check-out.',
  },
  RATE_LIMITED: { status: 429, message: 'Too many requests; retry later.' },
  INTERNAL_ERROR: { status: 500, message: 'An unexpected error occurred.' },
  STORE_UNAVAILABLE: { status: 503, message: 'The data store is unavailable.' },
  NOTIFICATION_FAILED: { status: 503, message: 'The notifier did not deliver the message; try again.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

export const ErrorCodeC = t.keyof(
  Object.fromEntries(Object.keys(errorCatalogue).map((k) => [k, null])) as Record<ErrorCode, null>,
);

export interface ApiError {
  readonly _tag: 'ApiError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly message: string;
  readonly details?: Readonly<Record<string, unknown>>;
  /** Extra response headers, such as `Retry-After` on 429. */
  readonly headers?: Readonly<Record<string, string>>;
}

export const apiError = (
  code: ErrorCode,
  message?: string,
  details?: Readonly<Record<string, unknown>>,
  headers?: Readonly<Record<string, string>>,
): ApiError => ({
  _tag: 'ApiError',
  code,
  status: errorCatalogue[code].status,
  message: message ?? errorCatalogue[code].message,
  ...(details === undefined ? {} : { details }),
  ...(headers === undefined ? {} : { headers }),
});

export const isApiError = (u: unknown): u is ApiError =>
  typeof u === 'object' && u !== null && '_tag' in u && u._tag === 'ApiError';

/** Thrown only from middleware that cannot return a value; the error handler unwraps it. */
export class ApiErrorException extends Error {
  constructor(readonly error: ApiError) {
    super(error.message);
  }
}

export const ErrorEnvelope = object(
  'ErrorEnvelope',
  {
    error: anonymousObject(
      { code: ErrorCodeC, message: Text, correlationId: Uuid },
      { details: t.UnknownRecord },
    ),
  },
  {
    name: Text,
    reason: Text,
  },
  {
    description:
      "Every non-2xx response carries this envelope. The replication endpoints add CouchDB's `name` (such as " +
      "`forbidden`) and `reason` beside it, which PouchDB's replicator reads.",
  },
);
export type ErrorEnvelope = t.TypeOf<typeof ErrorEnvelope>;
