/**
 * Every response a black-box test receives is checked against the OpenAPI document the same server
 * serves (`GET /api/v1/openapi.json`), as a client generated from that document would read it: the
 * status must be listed for the operation, the media type and body must match its schema (JSON
 * Schema 2020-12, checked by Ajv), and every header must be documented on that response unless it is
 * one of the headers every response carries (decision 0006). A REST client written from the document
 * alone met an undocumented `401` on login (issue 24); this makes such a gap fail the test that meets it.
 *
 * Not checked: paths no operation describes (unknown routes' 404, the CouchDB-protocol replication
 * endpoints listed under `x-replication`, `/kiosk/`, `/metrics`), CORS preflights, and requests Node's
 * parser refused (no operation was reached).
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';

/** Headers of every response, documented once in decision 0006 rather than on each operation. */
const EVERY_RESPONSE = new Set([
  'content-type',
  'content-length',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'vary',
  'cache-control',
  'strict-transport-security',
  'content-security-policy',
  'x-content-type-options',
  'x-frame-options',
  'x-xss-protection',
  'referrer-policy',
  'permissions-policy',
]);
const isEveryResponseHeader = (name: string): boolean =>
  EVERY_RESPONSE.has(name) || name.startsWith('access-control-');

const JsonObject = t.UnknownRecord;
const Doc = t.type({ paths: t.record(t.string, t.record(t.string, t.unknown)) });

/** `ajv-formats` is CommonJS; its module object is the plugin, and `.default` the same plugin again. */
const addFormats = addFormatsModule.default;

const pointer = (...segments: string[]): string =>
  segments.map((s) => encodeURIComponent(s.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/');

interface ContractResponse {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

export interface OpenApiContract {
  /** Every way the response departs from the document; empty when it conforms. */
  check(response: ContractResponse): string[];
}

export const openApiContract = (document: unknown): OpenApiContract => {
  const doc = Doc.decode(document);
  if (E.isLeft(doc)) throw new Error('not an OpenAPI document');
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addSchema(JsonObject.is(document) ? document : {}, 'doc');
  const compiled = new Map<string, ValidateFunction>();
  const validator = (ref: string): ValidateFunction => {
    const known = compiled.get(ref);
    if (known !== undefined) return known;
    const made = ajv.getSchema(`doc#/${ref}`);
    if (made === undefined) throw new Error(`no schema at ${ref}`);
    compiled.set(ref, made);
    return made;
  };
  const at = (ref: string): unknown => {
    let node: unknown = document;
    for (const part of ref.replace(/^#\//, '').split('/')) {
      node = JsonObject.is(node)
        ? node[decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~')]
        : undefined;
    }
    return node;
  };
  const deref = (node: unknown): unknown =>
    JsonObject.is(node) && typeof node.$ref === 'string' ? deref(at(node.$ref)) : node;

  const templates = Object.keys(doc.right.paths).map((template) => ({
    template,
    re: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));

  return {
    check({ method, path, status, headers, text }) {
      const m = method.toLowerCase();
      const match = templates.find(
        ({ template, re }) => re.test(path) && doc.right.paths[template]?.[m] !== undefined,
      );
      if (match === undefined) return [];
      const where = `${method} ${match.template} → ${status}`;
      const responses = deref(at(pointer('paths', match.template, m, 'responses')));
      const response = JsonObject.is(responses) ? deref(responses[String(status)]) : undefined;
      if (!JsonObject.is(response)) return [`${where}: status not documented`];
      const problems: string[] = [];

      const documentedHeaders = JsonObject.is(response.headers) ? response.headers : {};
      const byLowerName = new Map(Object.keys(documentedHeaders).map((n) => [n.toLowerCase(), n]));
      headers.forEach((value, name) => {
        if (isEveryResponseHeader(name)) return;
        const documented = byLowerName.get(name);
        if (documented === undefined) {
          problems.push(`${where}: header ${name} not documented`);
          return;
        }
        const header = deref(documentedHeaders[documented]);
        const schema = JsonObject.is(header) ? header.schema : undefined;
        if (!JsonObject.is(schema)) return;
        const typed = schema.type === 'integer' || schema.type === 'number' ? Number(value) : value;
        const validate = ajv.compile(schema);
        if (!validate(typed))
          problems.push(`${where}: header ${name}: ${value} ${ajv.errorsText(validate.errors)}`);
      });

      const mediaType = (headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
      const content = JsonObject.is(response.content) ? response.content : undefined;
      if (content === undefined) {
        if (text !== '') problems.push(`${where}: a body where none is documented`);
        return problems;
      }
      if (content[mediaType] === undefined) {
        problems.push(`${where}: media type ${mediaType || '(none)'} not documented`);
        return problems;
      }
      if (mediaType !== 'application/json') return problems;
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return [...problems, `${where}: the body is not JSON`];
      }
      const validate = validator(
        pointer('paths', match.template, m, 'responses', String(status), 'content', mediaType, 'schema'),
      );
      if (!validate(body)) {
        problems.push(`${where}: body ${ajv.errorsText(validate.errors, { dataVar: 'body' })}`);
      }
      // The envelope's schema is one for every status; which codes a 401 carries is in its description
      // (a client tells SESSION_EXPIRED, sign in again, from UNAUTHORIZED, refresh), so check it there.
      const code = status === 401 ? errorCodeOf(body) : undefined;
      if (code !== undefined && !String(response.description ?? '').includes(`\`${code}\``))
        problems.push(`${where}: error code ${code} not listed`);
      return problems;
    },
  };
};

const errorCodeOf = (body: unknown): string | undefined => {
  if (!JsonObject.is(body) || !JsonObject.is(body.error)) return undefined;
  return typeof body.error.code === 'string' ? body.error.code : undefined;
};

const contracts = new Map<string, Promise<OpenApiContract | undefined>>();

/** The document a server at `origin` serves, read once; `undefined` for servers that serve none. */
export const contractOf = (origin: string): Promise<OpenApiContract | undefined> => {
  let known = contracts.get(origin);
  if (known === undefined) {
    known = fetch(`${origin}/api/v1/openapi.json`)
      .then(async (r) => (r.status === 200 ? openApiContract(await r.json()) : undefined))
      .catch(() => undefined);
    contracts.set(origin, known);
  }
  return known;
};

/** A stopped server's port may be reused by another with other routes. */
export const forgetContract = (origin: string): void => {
  contracts.delete(origin);
};
