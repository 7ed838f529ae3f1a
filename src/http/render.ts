/**
 * A response as bytes-to-be: status, headers and the exact body text. Rendering before sending lets
 * the idempotency ledger store a response and replay it byte for byte.
 */
import type { Response } from 'express';
import type { ApiError } from '../domain/errors.js';
import type { EncodedReply } from './route.js';

export interface RenderedResponse {
  readonly status: number;
  /** Headers the handler (or the error) set, such as `Location` or `Retry-After`. */
  readonly headers: Readonly<Record<string, string>>;
  readonly contentType: string;
  /** Bytes only for an image; every other answer (and so every one the ledger keeps) is text. */
  readonly body: string | Uint8Array;
}

const JSON_TYPE = 'application/json; charset=utf-8';

export const renderReply = (reply: EncodedReply): RenderedResponse =>
  reply.mediaType === 'image/jpeg' && reply.body instanceof Uint8Array
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
): RenderedResponse => ({
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

export const sendRendered = (res: Response, rendered: RenderedResponse): void => {
  for (const [name, value] of Object.entries(rendered.headers)) res.setHeader(name, value);
  const body = rendered.body;
  // Express sends a Buffer as bytes, any other object as JSON.
  res
    .status(rendered.status)
    .type(rendered.contentType)
    .send(typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
};
