/**
 * A response as bytes-to-be: status, headers and the exact body text. Rendering before sending lets
 * the idempotency ledger store a response and replay it byte for byte.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import { type ByteStream, isByteStream } from '../domain/codec.js';
import type { ApiError } from '../domain/errors.js';
import type { EncodedReply } from './route.js';

export interface RenderedResponse {
  readonly status: number;
  /** Headers the handler (or the error) set, such as `Location` or `Retry-After`. */
  readonly headers: Readonly<Record<string, string>>;
  readonly contentType: string;
  /**
   * Bytes only for an image, a stream only for a backup (decision 0044); every other answer (and so
   * every one the ledger keeps) is text.
   */
  readonly body: string | Uint8Array | ByteStream;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** Media types whose body goes out as the bytes the handler made (a photo, a printable card). */
const BYTE_TYPES: ReadonlySet<string> = new Set(['image/jpeg', 'image/svg+xml', 'image/png']);

export const renderReply = (reply: EncodedReply): RenderedResponse =>
  reply.mediaType === 'application/x-ndjson' && isByteStream(reply.body)
    ? { status: reply.status, headers: reply.headers, contentType: reply.mediaType, body: reply.body }
    : BYTE_TYPES.has(reply.mediaType) && reply.body instanceof Uint8Array
      ? {
          status: reply.status,
          headers: reply.headers,
          contentType: reply.mediaType,
          body: reply.body,
        }
      : reply.mediaType === 'text/plain' || reply.mediaType === 'text/csv'
        ? {
            status: reply.status,
            headers: reply.headers,
            contentType: `${reply.mediaType}; charset=utf-8`,
            body: String(reply.body),
          }
        : {
            status: reply.status,
            headers: reply.headers,
            contentType: JSON_TYPE,
            body: JSON.stringify(reply.body),
          };

/** `extra` adds top-level fields beside the envelope (the CouchDB `name`/`reason` of replication). */
export const renderError = (
  error: ApiError,
  correlationId: string,
  extra: Readonly<Record<string, string>> = {},
): RenderedResponse & { readonly body: string } => ({
  status: error.status,
  headers: error.headers ?? {},
  contentType: JSON_TYPE,
  body: JSON.stringify({
    error: {
      code: error.code,
      message: error.message,
      correlationId,
      ...(error.details === undefined ? {} : { details: error.details }),
    },
    ...extra,
  }),
});

/**
 * Sends a rendered response. A stream that fails half-way cannot change a status already sent: the
 * pipeline cuts the connection instead, so the client sees a body that ends early (a backup without
 * its last line, which a restore refuses), never a complete-looking one; `onStreamError` hears why.
 */
export const sendRendered = (
  res: Response,
  rendered: RenderedResponse,
  onStreamError: (e: unknown) => void = () => undefined,
): void => {
  for (const [name, value] of Object.entries(rendered.headers)) res.setHeader(name, value);
  const body = rendered.body;
  res.status(rendered.status).type(rendered.contentType);
  if (typeof body === 'string') res.send(body);
  // Express sends a Buffer as bytes, any other object as JSON.
  else if (body instanceof Uint8Array) res.send(Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  else pipeline(Readable.from(body), res).catch(onStreamError);
};
