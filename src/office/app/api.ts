/**
 * The office's REST calls, through the shared transport (`client.ts`: token, device id, one shared
 * refresh on a 401, an Idempotency-Key on mutations kept across the retry). Answers are decoded by
 * the callers; a failure is a value, never a throw.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { type Auth, transport } from './client.js';

export type { Auth };

export const currentAuth = (): Auth | undefined => transport.current();

export const signOut = (): Promise<void> => transport.signOut();

export interface Answer {
  /** 0 when the server could not be reached. */
  readonly status: number;
  readonly json: unknown;
}

const readJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

const Envelope = t.type({ error: t.type({ code: t.string, message: t.string }) });
export const errorMessage = (a: Answer): string => {
  const d = Envelope.decode(a.json);
  return E.isRight(d) ? d.right.error.message : `HTTP ${a.status}`;
};

/** An authenticated call. `body` is JSON unless it is a File (an upload, sent as `text/csv`). */
export const apiCall = async (method: string, path: string, body?: unknown): Promise<Answer> => {
  const headers: Record<string, string> = {};
  if (body instanceof File) headers['Content-Type'] = 'text/csv';
  else if (body !== undefined) headers['Content-Type'] = 'application/json';
  try {
    const res = await transport.fetch(path, {
      method,
      headers,
      cache: 'no-store',
      ...(body === undefined ? {} : { body: body instanceof File ? body : JSON.stringify(body) }),
    });
    return { status: res.status, json: readJson(await res.text()) };
  } catch {
    return { status: 0, json: undefined };
  }
};

/**
 * A GET whose answer is a file (a report's CSV): the body as text with its status. The text is handed
 * to a download as is, never parsed here.
 */
export const apiText = async (path: string, accept: string): Promise<{ status: number; text: string }> => {
  try {
    const res = await transport.fetch(path, { cache: 'no-store', headers: { Accept: accept } });
    return { status: res.status, text: await res.text() };
  } catch {
    return { status: 0, text: '' };
  }
};

export interface BytesAnswer extends Answer {
  /** The body's bytes when the answer is not JSON (an image). */
  readonly bytes: Uint8Array<ArrayBuffer> | undefined;
}

/** An authenticated call whose body is raw bytes of a given type (a photo upload), or whose answer may be bytes (reading a photo). */
export const apiBytes = async (
  method: 'GET' | 'PUT',
  path: string,
  upload?: { readonly body: Blob; readonly type: string },
): Promise<BytesAnswer> => {
  try {
    const res = await transport.fetch(path, {
      method,
      cache: 'no-store',
      ...(upload === undefined ? {} : { headers: { 'Content-Type': upload.type }, body: upload.body }),
    });
    const json = (res.headers.get('content-type') ?? '').startsWith('application/json');
    if (json) return { status: res.status, json: readJson(await res.text()), bytes: undefined };
    return { status: res.status, json: undefined, bytes: new Uint8Array(await res.arrayBuffer()) };
  } catch {
    return { status: 0, json: undefined, bytes: undefined };
  }
};
