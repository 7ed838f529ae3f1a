/**
 * Shared plumbing of the security battery (fuzz, authorisation matrix, JWT attacks, injection, mass
 * assignment): a raw HTTP client, a bounded worker pool, the envelope check as a value (so a run of
 * thousands of requests can count failures instead of stopping at the first), and a walker that
 * builds a valid example value from a route's io-ts codec, so the battery follows the registry.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import http, { type IncomingHttpHeaders } from 'node:http';
import net from 'node:net';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { isUuid, metaOf, ObjectType } from '../../src/domain/codec.js';
import { ErrorEnvelope } from '../../src/domain/errors.js';
import type { Route } from '../../src/http/route.js';
import { startMain } from '../support/mainProcess.js';
import { serviceEntry } from '../support/serviceBundle.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';
import { DEV_TOKENS } from '../support/testService.js';

export type Role = 'ADMIN' | 'CHAMADOR' | 'RELATORIOS' | 'CADASTRO';
export const SYSTEM_ROLES: ReadonlyArray<Role> = ['ADMIN', 'CHAMADOR', 'RELATORIOS', 'CADASTRO'];

export const DEV_TOKEN_OF: Readonly<Record<Role, string>> = {
  ADMIN: DEV_TOKENS.DEV_ADMIN_TOKEN,
  CHAMADOR: DEV_TOKENS.DEV_CALLER_TOKEN,
  RELATORIOS: DEV_TOKENS.DEV_REPORTS_TOKEN,
  CADASTRO: DEV_TOKENS.DEV_CADASTRO_TOKEN,
};

/**
 * Who may pass each auth class, written out here from decision 0007 rather than imported from
 * `src/rules/authorization.ts`, so the matrix checks the service against the contract and not
 * against itself.
 */
export const CLASS_ROLES: Readonly<Record<string, ReadonlyArray<Role>>> = {
  admin: ['ADMIN'],
  cadastro: ['ADMIN', 'CADASTRO'],
  chamador: ['ADMIN', 'CHAMADOR'],
  relatorios: ['ADMIN', 'RELATORIOS'],
};

export type WireBody = string | Uint8Array;

export interface WireRequest {
  readonly method: string;
  /** Sent as is: the client must not normalise what the fuzzer crafted. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: WireBody;
}

export interface WireResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

export interface Target {
  readonly host: string;
  readonly port: number;
  readonly agent: http.Agent;
}

export const targetOf = (url: string, sockets: number): Target => {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port),
    agent: new http.Agent({ keepAlive: true, maxSockets: sockets }),
  };
};

/** One request over node:http (not fetch): raw bytes, unnormalised paths and latin1 header values. */
export const send = (target: Target, req: WireRequest): Promise<WireResponse> =>
  new Promise((resolve, reject) => {
    const body = req.body;
    const headers: Record<string, string> = { ...req.headers };
    if (body !== undefined) {
      headers['Content-Length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.length);
    }
    const r = http.request(
      {
        host: target.host,
        port: target.port,
        agent: target.agent,
        method: req.method,
        path: req.path,
        headers,
      },
      (res) => {
        // A string decoder, so a character split across chunks is not mangled.
        res.setEncoding('utf8');
        let text = '';
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
        res.on('error', reject);
      },
    );
    // A hung request would stall the pool silently; fail it loudly instead.
    r.setTimeout(30_000, () => r.destroy(new Error(`timeout: ${req.method} ${req.path.slice(0, 120)}`)));
    r.on('error', reject);
    if (body !== undefined) r.write(body);
    r.end();
  });

/** Runs `fn` over `items` with at most `concurrency` in flight; results keep the input order. */
export const runPool = async <T, R>(
  items: ReadonlyArray<T>,
  concurrency: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> => {
  const results: R[] = new Array<R>(items.length);
  // One iterator shared by every worker: each takes the next item when it is free.
  const queue = items.entries();
  const worker = async (): Promise<void> => {
    for (const [i, item] of queue) results[i] = await fn(item, i);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
};

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

export const jsonOf = (r: WireResponse): unknown => parseJson(r.text);

/**
 * Why an error response is not the contract's envelope, or undefined when it is (or is not an
 * error). The same checks as `expectEnvelope` in test/support/http.ts, returned instead of thrown.
 */
export const envelopeProblem = (r: WireResponse): string | undefined => {
  if (r.status < 400) return undefined;
  const type = r.headers['content-type'];
  if (typeof type !== 'string' || !/^application\/json/.test(type)) return `content-type ${String(type)}`;
  const decoded = ErrorEnvelope.decode(parseJson(r.text));
  if (E.isLeft(decoded)) return 'body is not an error envelope';
  const envelope = decoded.right.error;
  if (envelope.message === '') return 'empty message';
  if (!isUuid(envelope.correlationId)) return 'correlationId is not a UUID';
  if (r.headers['x-correlation-id'] !== envelope.correlationId) return 'X-Correlation-Id differs';
  return undefined;
};

/** The error code of an envelope, or undefined. */
export const errorCodeOf = (r: WireResponse): string | undefined => {
  const decoded = ErrorEnvelope.decode(parseJson(r.text));
  return E.isLeft(decoded) ? undefined : decoded.right.error.code;
};

const Issues = t.type({ issues: t.array(t.type({ path: t.string })) });

/** The issue paths of a VALIDATION_FAILED envelope (empty when there are none). */
export const issuePathsOf = (r: WireResponse): string[] => {
  const decoded = ErrorEnvelope.decode(parseJson(r.text));
  if (E.isLeft(decoded)) return [];
  const issues = Issues.decode(decoded.right.error.details);
  return E.isLeft(issues) ? [] : issues.right.issues.map((i) => i.path);
};

/** Decodes a JSON response with `codec`, throwing with the body when it does not match. */
export const decodeWire = <C extends t.Mixed>(codec: C, r: WireResponse): t.TypeOf<C> => {
  const decoded = codec.decode(parseJson(r.text));
  if (E.isLeft(decoded)) throw new Error(`unexpected body (${r.status}): ${r.text.slice(0, 500)}`);
  return decoded.right;
};

/** `/api/v1/students/{studentId}` with each `{param}` replaced by `valueFor(param)`, URL-encoded. */
export const fillPath = (path: string, valueFor: (param: string) => string): string =>
  path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => encodeURIComponent(valueFor(name)));

/** `/api/v1/students/{studentId}` with raw (already encoded or deliberately broken) segments. */
export const fillPathRaw = (path: string, valueFor: (param: string) => string): string =>
  path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => valueFor(name));

export const pathParamsOf = (path: string): string[] =>
  [...path.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].flatMap((m) => (m[1] === undefined ? [] : [m[1]]));

/** The required and optional field names of a closed object codec, or undefined for other codecs. */
export const fieldsOf = (
  codec: t.Mixed | undefined,
): { required: string[]; optional: string[] } | undefined =>
  codec instanceof ObjectType
    ? { required: Object.keys(codec.required), optional: Object.keys(codec.optional) }
    : undefined;

const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === 'object' && u !== null && !Array.isArray(u);

/** Strings tried, in order, for a refinement the walker cannot construct from its annotations. */
const STRING_CANDIDATES = (): string[] => [
  randomUUID(),
  '2026-11-26',
  '2026-11-26T12:00:00.000Z',
  '2026-11-26T12:00:00Z',
  'pessoa@example.org',
  'CUSTOM_ROLE',
  'POST /api/v1/students',
  'a valid text of some length',
  'Abcdefghijkl-0123456789',
  '+55 11 5555-0101',
  '123456',
  'x',
];

const stringCandidates = (codec: t.Mixed): string[] => {
  const meta = metaOf(codec);
  const out: string[] = [];
  for (const e of meta?.examples ?? []) if (typeof e === 'string') out.push(e);
  switch (meta?.format) {
    case 'uuid':
      out.push(randomUUID());
      break;
    case 'date':
      out.push('2026-11-26');
      break;
    case 'date-time':
      out.push('2026-11-26T12:00:00.000Z');
      break;
    case 'email':
      out.push('pessoa@example.org');
      break;
    default:
      break;
  }
  const min = meta?.minLength ?? 1;
  const max = meta?.maxLength ?? Math.max(min, 40);
  const text = 'Texto valido de exemplo para o fuzz '.repeat(20);
  out.push(text.slice(0, Math.min(max, Math.max(min, 24))).padEnd(min, 'x'));
  return [...out, ...STRING_CANDIDATES()];
};

const numberCandidates = (codec: t.Mixed): number[] => {
  const meta = metaOf(codec);
  const out: number[] = [];
  if (meta?.minimum !== undefined) out.push(meta.minimum);
  if (meta?.maximum !== undefined) out.push(meta.maximum);
  return [...out, 1, 5, 0, 10, 100];
};

/**
 * A value `codec` accepts, built by walking the codec (closed objects with every optional field,
 * refinements by their annotations, then by trying common candidates), or undefined when none is
 * found. Callers treat undefined as "only structural fuzz for this route".
 */
export const exampleOf = (codec: t.Mixed, depth = 0): unknown => {
  if (depth > 12) return undefined;
  const accept = (candidates: ReadonlyArray<unknown>): unknown => candidates.find((c) => codec.is(c));
  if (codec instanceof ObjectType) {
    const required: Record<string, t.Mixed> = codec.required;
    const optional: Record<string, t.Mixed> = codec.optional;
    const full: Record<string, unknown> = {};
    for (const [k, c] of Object.entries(required)) full[k] = exampleOf(c, depth + 1);
    const minimal = { ...full };
    for (const [k, c] of Object.entries(optional)) {
      const v = exampleOf(c, depth + 1);
      if (v !== undefined) full[k] = v;
    }
    // An object-level rule (say "exactly one of two fields") may refuse the full example; then
    // try each optional field alone on top of the required ones.
    const alone = Object.keys(optional).map((k) => ({ ...minimal, [k]: full[k] }));
    return accept([full, minimal, ...alone]);
  }
  if (codec instanceof t.RefinementType) {
    const inner = exampleOf(codec.type, depth + 1);
    const base: t.Mixed = codec.type;
    if (base instanceof t.StringType) return accept([...stringCandidates(codec), inner]);
    if (base instanceof t.NumberType) return accept([...numberCandidates(codec), inner]);
    if (base instanceof t.ArrayType && Array.isArray(inner)) {
      const min = metaOf(codec)?.minItems ?? 1;
      return accept([inner, Array.from({ length: min }, () => inner[0]), []]);
    }
    return accept([inner]);
  }
  if (codec instanceof t.StringType) return 'texto';
  if (codec instanceof t.NumberType) return 1;
  if (codec instanceof t.BooleanType) return true;
  if (codec instanceof t.NullType) return null;
  if (codec instanceof t.UndefinedType) return undefined;
  if (codec instanceof t.UnknownType || codec instanceof t.AnyDictionaryType) return {};
  if (codec instanceof t.LiteralType) return codec.value;
  if (codec instanceof t.KeyofType) return Object.keys(codec.keys)[0];
  if (codec instanceof t.ArrayType || codec instanceof t.ReadonlyArrayType) {
    const item = exampleOf(codec.type, depth + 1);
    return accept(item === undefined ? [[]] : [[item], []]);
  }
  if (codec instanceof t.UnionType) {
    const members: t.Mixed[] = codec.types;
    // Prefer a non-null member: a null example exercises less of the handler.
    const values = members.map((m) => exampleOf(m, depth + 1));
    return accept([...values.filter((v) => v !== null), ...values]);
  }
  if (codec instanceof t.IntersectionType) {
    const members: t.Mixed[] = codec.types;
    const parts = members.map((m) => exampleOf(m, depth + 1));
    const merged = parts.every(isRecord) ? Object.assign({}, ...parts) : parts[parts.length - 1];
    return accept([merged]);
  }
  if (codec instanceof t.InterfaceType || codec instanceof t.PartialType) {
    const props: Record<string, t.Mixed> = codec.props;
    const out: Record<string, unknown> = {};
    for (const [k, c] of Object.entries(props)) out[k] = exampleOf(c, depth + 1);
    return accept([out]);
  }
  if (codec instanceof t.ExactType || codec instanceof t.ReadonlyType)
    return exampleOf(codec.type, depth + 1);
  if (codec instanceof t.DictionaryType) return {};
  return undefined;
};

/** A route's method and path for messages. */
export const routeName = (route: Route): string => `${route.method.toUpperCase()} ${route.path}`;

/** Formats 12345 as "12,345" for the printed figures. */
export const thousands = (n: number): string => n.toLocaleString('en-US');

/** The real process (`src/main.ts`) as a child: a crash ends it visibly, and it gets its own core. */
export interface ChildService {
  readonly url: string;
  /** Log lines at error level or above (pino 50+), e.g. "unhandled error". */
  errorLines(): ReadonlyArray<string>;
  /** Undefined while running, else how it ended. */
  exited(): string | undefined;
  stop(): Promise<void>;
}

/** A port that was free a moment ago (the child binds it right after). */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });

const healthy = async (url: string): Promise<boolean> => {
  try {
    return (await fetch(`${url}/api/v1/health`)).status === 200;
  } catch {
    return false;
  }
};

/**
 * Logs at `warn`: the request lines of a fuzz run (tens of thousands) cost a fifth of the
 * service's time, and errors ("unhandled error") are still written. So the URL is not read from
 * the start-up line: the port is chosen here and the health endpoint polled.
 */
export const spawnService = async (label: string, env: Record<string, string>): Promise<ChildService> => {
  const dataDir = await makeTempDir(label);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = startMain(
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ...env,
    },
    await serviceEntry(),
  );
  const errors: string[] = [];
  let partial = '';
  let ended: string | undefined;
  child.on('exit', (code, signal) => {
    ended = `exit code ${String(code)}, signal ${String(signal)}`;
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (/"level":(5\d|6\d)/.test(line) && errors.length < 1000) errors.push(line);
    }
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    if (stderr.length < 20_000) stderr += chunk.toString('utf8');
  });
  const deadline = Date.now() + 60_000;
  while (!(await healthy(url))) {
    if (ended !== undefined || Date.now() > deadline) {
      child.kill('SIGKILL');
      await removeDir(dataDir);
      throw new Error(`${label} did not start (${ended ?? 'timeout'}): ${stderr.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    errorLines: () => errors,
    exited: () => ended,
    async stop() {
      if (ended === undefined) {
        const gone = once(child, 'exit');
        child.kill('SIGTERM');
        await Promise.race([gone, new Promise((r) => setTimeout(r, 10_000))]);
        if (ended === undefined) child.kill('SIGKILL');
      }
      await removeDir(dataDir);
    },
  };
};
