import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { isUuid } from '../../src/domain/codec.js';
import { ErrorEnvelope } from '../../src/domain/errors.js';
import { contractOf } from './openApiContract.js';

export interface HttpResult {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: unknown;
}

/**
 * One request, and its whole answer. Every answer is checked against the OpenAPI document its server
 * serves (`openApiContract.ts`): a status, header or field the document does not describe fails the
 * test that met it.
 */
export const call = async (url: string, init: RequestInit = {}): Promise<HttpResult> => {
  const res = await fetch(url, init);
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  const method = (init.method ?? 'GET').toUpperCase();
  if (method !== 'OPTIONS') {
    const { origin, pathname } = new URL(url);
    const contract = await contractOf(origin);
    const problems =
      contract?.check({ method, path: pathname, status: res.status, headers: res.headers, text }) ?? [];
    expect(
      problems,
      `the response departs from the served OpenAPI document:\n${text.slice(0, 500)}`,
    ).to.deep.equal([]);
  }
  return { status: res.status, headers: res.headers, text, json };
};

export type Envelope = ErrorEnvelope['error'];

/** Asserts the contract's error envelope (decoded by the same codec the OpenAPI document shows). */
export const expectEnvelope = (r: HttpResult, status: number, code: string): Envelope => {
  expect(r.status, r.text).to.equal(status);
  expect(r.headers.get('content-type')).to.match(/^application\/json/);
  const decoded = ErrorEnvelope.decode(r.json);
  if (E.isLeft(decoded)) throw new Error(`not an error envelope: ${r.text}`);
  const envelope = decoded.right.error;
  expect(envelope.code).to.equal(code);
  expect(envelope.message).to.be.a('string').and.not.equal('');
  expect(isUuid(envelope.correlationId)).to.equal(true);
  expect(r.headers.get('x-correlation-id')).to.equal(envelope.correlationId);
  return envelope;
};

const Issues = t.type({ issues: t.array(t.type({ path: t.string, message: t.string })) });

/** The `path` of every validation issue in an envelope's details. */
export const issuePaths = (envelope: Envelope): string[] => {
  const decoded = Issues.decode(envelope.details);
  if (E.isLeft(decoded)) throw new Error(`details without issues: ${JSON.stringify(envelope.details)}`);
  return decoded.right.issues.map((i) => i.path);
};

/** Decodes a response body with a codec, failing the test with the body when it does not match. */
export const decodeAs = <C extends t.Mixed>(codec: C, json: unknown): t.TypeOf<C> => {
  const d = codec.decode(json);
  if (E.isLeft(d)) throw new Error(`unexpected body: ${JSON.stringify(json)}`);
  return d.right;
};

/** Spec, Authentication item 11, with the CSP of decision 0006. */
export const SPEC_SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['strict-transport-security', 'max-age=63072000; includeSubDomains; preload'],
  [
    'content-security-policy',
    "default-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'self'",
  ],
  ['x-content-type-options', 'nosniff'],
  ['x-frame-options', 'DENY'],
  ['x-xss-protection', '0'],
  ['referrer-policy', 'strict-origin-when-cross-origin'],
  ['permissions-policy', 'camera=(), microphone=(), geolocation=(), interest-cohort=()'],
];
