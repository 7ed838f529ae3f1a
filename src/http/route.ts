/**
 * A route is a declaration: method, path, auth class, codecs and a handler. The router, request
 * validation, authorisation and the OpenAPI document are all derived from the list of routes.
 */
import type { IncomingHttpHeaders } from 'node:http';
import * as E from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import Negotiator from 'negotiator';
import { anonymousObject } from '../domain/codec.js';
import { type ApiError, apiError, type ErrorCode } from '../domain/errors.js';
import { capIssues, MAX_REPORTED_ISSUES, toIssues, type ValidationIssue } from '../domain/issues.js';
import type { Permission, Principal } from '../domain/principal.js';
import type { AuthClass } from '../rules/authorization.js';
import type { RateLimitPolicy } from '../rules/rateLimit.js';
import type { AppDeps } from './deps.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export const MUTATING_METHODS: ReadonlySet<HttpMethod> = new Set(['post', 'put', 'patch', 'delete']);

export interface HandlerContext<P, Q, B> {
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  readonly principal: Principal | null;
  readonly deviceId: string | null;
  readonly correlationId: string;
  /** A keyed mutation's scope (principal and Idempotency-Key), the same for every attempt of it. */
  readonly requestKey: string | undefined;
  /** The ledger held nothing for that key when this attempt claimed it (`executeIdempotently`). */
  readonly freshKey?: boolean;
  /** When the request arrived, by the service's clock. */
  readonly receivedAt: Date;
  /** The request's headers, for the few handlers that read one (cookies, the CSRF header). */
  readonly headers: Readonly<IncomingHttpHeaders>;
  readonly deps: AppDeps;
  /** The routes the app was built from, for the few handlers that describe the API itself. */
  readonly routes: ReadonlyArray<Route>;
}

export interface Reply<R> {
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: R;
  /** The student, user or consent the request was about, when the path does not name it (creations). */
  readonly auditSubjectId?: string;
  /** Counts and ids the audit entry adds to its details (never personal data values). */
  readonly auditDetails?: AuditFacts;
  /**
   * The body's media type, where the response codec is bytes of more than one type (a card as SVG or
   * PNG); one of the codec's types. Absent: the route's.
   */
  readonly mediaType?: MediaType;
}

export type AuditFacts = Readonly<Record<string, string | number | boolean>>;

export type MediaType =
  | 'application/json'
  | 'text/plain'
  | 'text/csv'
  | 'image/jpeg'
  | 'image/svg+xml'
  | 'image/png'
  | 'application/x-ndjson';

export interface ResponseSpec<RC extends t.Mixed> {
  readonly status: number;
  readonly description: string;
  readonly codec: RC;
  readonly mediaType?: MediaType;
  /** Response headers the success response carries, for the OpenAPI document. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The same response as CSV for clients whose Accept header prefers `text/csv` (JSON stays the
   * default). `render` turns the decoded body into the CSV text.
   */
  readonly csv?: {
    readonly description: string;
    readonly filename: string;
    readonly render: (body: t.TypeOf<RC>) => string;
  };
}

export interface RouteSpec<PC extends t.Mixed, QC extends t.Mixed, BC extends t.Mixed, RC extends t.Mixed> {
  readonly operationId: string;
  readonly method: HttpMethod;
  /** OpenAPI form: `/api/v1/students/{studentId}`. */
  readonly path: string;
  readonly auth: AuthClass;
  readonly summary: string;
  readonly description?: string;
  readonly tags: ReadonlyArray<string>;
  readonly params?: PC;
  readonly query?: QC;
  readonly body?: BC;
  /** An absent body decodes as `{}` (for endpoints whose every body field is optional). */
  readonly bodyOptional?: boolean;
  readonly response: ResponseSpec<RC>;
  /** Error codes this route can answer beyond the ones every route of its auth class shares. */
  readonly errors?: ReadonlyArray<ErrorCode>;
  /**
   * Mutations need an Idempotency-Key unless exempt. Only public routes may be exempt (they have no
   * principal to key the ledger by); the reason is shown in the OpenAPI document.
   */
  readonly idempotency?: { readonly exempt: string };
  /** A permission that also opens the route to custom roles granting it (never for `admin` routes). */
  readonly permission?: Permission;
  /** Counted per client IP before anything else, every request included. */
  readonly rateLimit?: { readonly scope: string; readonly policy: RateLimitPolicy };
  /** Reads that return personal or sensitive data are audited like mutations, under this action. */
  readonly auditRead?: 'READ_SENSITIVE' | 'EXPORT';
  readonly handler: (
    ctx: HandlerContext<t.TypeOf<PC>, t.TypeOf<QC>, t.TypeOf<BC>>,
  ) => Promise<E.Either<ApiError, Reply<t.TypeOf<RC>>>>;
}

export interface RawRequest {
  readonly params: unknown;
  readonly query: unknown;
  readonly body: unknown;
}

export interface EncodedReply {
  readonly auditSubjectId?: string;
  readonly auditDetails?: AuditFacts;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
  readonly mediaType: MediaType;
}

export type BaseContext = Omit<HandlerContext<unknown, unknown, unknown>, 'params' | 'query' | 'body'>;

/** A decoded request, ready to run; the decoded values stay typed inside the closure. */
export type PreparedCall = (ctx: BaseContext) => Promise<E.Either<ApiError, EncodedReply>>;

/** The type-erased form kept in the registry; `run` closes over the route's own types. */
export interface Route {
  readonly operationId: string;
  readonly method: HttpMethod;
  readonly path: string;
  readonly auth: AuthClass;
  readonly summary: string;
  readonly description: string | undefined;
  readonly tags: ReadonlyArray<string>;
  readonly params: t.Mixed | undefined;
  readonly query: t.Mixed | undefined;
  readonly body: t.Mixed | undefined;
  readonly bodyOptional: boolean;
  /** What the OpenAPI document needs of the response; the CSV renderer stays inside `prepare`. */
  readonly response: Omit<ResponseSpec<t.Mixed>, 'csv'> & {
    readonly csv?: { readonly description: string; readonly filename: string };
  };
  readonly errors: ReadonlyArray<ErrorCode>;
  /** Set when a mutating route is exempt from the Idempotency-Key requirement, with the reason. */
  readonly idempotencyExempt: string | undefined;
  readonly permission: Permission | undefined;
  readonly rateLimit: { readonly scope: string; readonly policy: RateLimitPolicy } | undefined;
  readonly auditRead: 'READ_SENSITIVE' | 'EXPORT' | undefined;
  /** Decodes params, query and body, reporting every issue at once. */
  prepare(raw: RawRequest): E.Either<ApiError, PreparedCall>;
}

/** True when the route needs an Idempotency-Key: every mutation that is not declared exempt. */
export const needsIdempotencyKey = (route: Route): boolean =>
  MUTATING_METHODS.has(route.method) && route.idempotencyExempt === undefined;

// Absent params or query still decode, so stray query parameters are reported like stray body fields.
const EmptyObject = anonymousObject({});

export const defineRoute = <
  PC extends t.Mixed = typeof EmptyObject,
  QC extends t.Mixed = typeof EmptyObject,
  BC extends t.Mixed = t.UndefinedC,
  RC extends t.Mixed = t.Mixed,
>(
  spec: RouteSpec<PC, QC, BC, RC>,
): Route => {
  const paramsCodec: t.Mixed = spec.params ?? EmptyObject;
  const queryCodec: t.Mixed = spec.query ?? EmptyObject;
  if (spec.idempotency !== undefined && spec.auth !== 'none') {
    throw new Error(`${spec.operationId}: only public routes may be exempt from Idempotency-Key`);
  }
  if (MUTATING_METHODS.has(spec.method) && spec.auth === 'none' && spec.idempotency === undefined) {
    throw new Error(
      `${spec.operationId}: a public mutation has no principal to key idempotency by; declare it exempt`,
    );
  }
  return {
    operationId: spec.operationId,
    method: spec.method,
    path: spec.path,
    auth: spec.auth,
    summary: spec.summary,
    description: spec.description,
    tags: spec.tags,
    params: spec.params,
    query: spec.query,
    body: spec.body,
    bodyOptional: spec.bodyOptional ?? false,
    response: {
      status: spec.response.status,
      description: spec.response.description,
      codec: spec.response.codec,
      ...(spec.response.mediaType === undefined ? {} : { mediaType: spec.response.mediaType }),
      ...(spec.response.headers === undefined ? {} : { headers: spec.response.headers }),
      ...(spec.response.csv === undefined
        ? {}
        : { csv: { description: spec.response.csv.description, filename: spec.response.csv.filename } }),
    },
    errors: spec.errors ?? [],
    idempotencyExempt: spec.idempotency?.exempt,
    permission: spec.permission,
    rateLimit: spec.rateLimit,
    auditRead: spec.auditRead,
    prepare(raw) {
      const issues: ValidationIssue[] = [];
      const params = paramsCodec.decode(raw.params ?? {});
      if (E.isLeft(params)) issues.push(...toIssues('params', params.left));
      const query = queryCodec.decode(raw.query ?? {});
      if (E.isLeft(query)) issues.push(...toIssues('query', query.left));
      const rawBody = raw.body === undefined && spec.bodyOptional === true ? {} : raw.body;
      const body = spec.body === undefined ? E.right(undefined) : spec.body.decode(rawBody);
      if (E.isLeft(body)) issues.push(...toIssues('body', body.left));
      if (E.isLeft(params) || E.isLeft(query) || E.isLeft(body) || issues.length > 0) {
        return E.left(apiError('VALIDATION_FAILED', undefined, capIssues(issues, MAX_REPORTED_ISSUES)));
      }
      const decoded = { params: params.right, query: query.right, body: body.right };
      return E.right(async (ctx) => {
        const result = await spec.handler({ ...ctx, ...decoded });
        const csv = spec.response.csv;
        const asCsv = csv !== undefined && prefersCsv(ctx.headers.accept);
        return E.map(
          (reply: Reply<t.TypeOf<RC>>): EncodedReply => ({
            ...(reply.auditSubjectId === undefined ? {} : { auditSubjectId: reply.auditSubjectId }),
            ...(reply.auditDetails === undefined ? {} : { auditDetails: reply.auditDetails }),
            status: reply.status ?? spec.response.status,
            headers: {
              ...(reply.headers ?? {}),
              ...(csv === undefined ? {} : { Vary: 'Accept' }),
              ...(asCsv ? { 'Content-Disposition': `attachment; filename="${csv.filename}"` } : {}),
            },
            body: asCsv ? csv.render(reply.body) : spec.response.codec.encode(reply.body),
            mediaType: asCsv
              ? 'text/csv'
              : (reply.mediaType ?? spec.response.mediaType ?? 'application/json'),
          }),
        )(result);
      });
    },
  };
};

/** True when the Accept header ranks `text/csv` above JSON; JSON wins ties and absent headers. */
const prefersCsv = (accept: string | undefined): boolean =>
  accept !== undefined &&
  new Negotiator({ headers: { accept } }).mediaType(['application/json', 'text/csv']) === 'text/csv';

/** `/api/v1/students/{studentId}` → `/api/v1/students/:studentId` for Express. */
export const expressPath = (path: string): string => path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');
