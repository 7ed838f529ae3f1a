/**
 * Requests Node's HTTP parser refuses before Express sees them (headers over the size limit, a
 * request line that is not HTTP, a request too slow to arrive). Node's default answer is a bare status
 * line with no body and none of the contract's headers; these answers carry the error envelope, the
 * security headers, `Cache-Control: no-store` and a correlation id like every other response
 * (decisions 0005, 0006). The connection is closed after: the parser's state is lost.
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { type ApiError, apiError } from '../domain/errors.js';
import { SECURITY_HEADERS } from './middleware/securityHeaders.js';
import { renderError } from './render.js';
import { CORRELATION_HEADER } from './requestContext.js';

/** Node's own mapping (lib/_http_server.js), in the catalogue's terms. */
export const clientErrorOf = (code: string | undefined): ApiError => {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return apiError('HEADERS_TOO_LARGE');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return apiError('PAYLOAD_TOO_LARGE', 'The chunk extensions of the request body are too large.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return apiError('REQUEST_TIMEOUT');
    default:
      return apiError('VALIDATION_FAILED', 'The request is not valid HTTP.', {
        issues: [{ path: 'request', message: 'malformed HTTP request' }],
      });
  }
};

/** The whole response as the bytes to write: no framework is left to write it. */
export const clientErrorResponse = (error: ApiError, correlationId: string): string => {
  const rendered = renderError(error, correlationId);
  const headers: Record<string, string> = {
    ...SECURITY_HEADERS,
    'Cache-Control': 'no-store',
    [CORRELATION_HEADER]: correlationId,
    ...rendered.headers,
    'Content-Type': rendered.contentType,
    'Content-Length': String(Buffer.byteLength(rendered.body)),
    Connection: 'close',
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  return `HTTP/1.1 ${rendered.status} ${STATUS_CODES[rendered.status] ?? ''}\r\n${lines.join('\r\n')}\r\n\r\n${rendered.body}`;
};

const codeOf = (err: Error): string | undefined => {
  const code: unknown = Reflect.get(err, 'code');
  return typeof code === 'string' ? code : undefined;
};

/** For `server.on('clientError', …)`. */
export const answerClientError =
  (logger: Logger) =>
  (err: Error, socket: Duplex): void => {
    const code = codeOf(err);
    // A reset has nobody left to answer; a response already begun on this socket cannot be followed
    // by another (Node's default handler makes the same two checks).
    const inFlight: unknown = Reflect.get(socket, '_httpMessage');
    const begun =
      typeof inFlight === 'object' && inFlight !== null && Reflect.get(inFlight, 'headersSent') === true;
    if (code === 'ECONNRESET' || !socket.writable || begun) {
      socket.destroy();
      return;
    }
    const error = clientErrorOf(code);
    const correlationId = randomUUID();
    logger.info(
      { correlationId, status: error.status, parserError: code },
      'request refused by the HTTP parser',
    );
    socket.end(clientErrorResponse(error, correlationId));
  };
