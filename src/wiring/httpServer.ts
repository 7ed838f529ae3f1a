/**
 * The HTTP server around the app: its timeouts, where it listens, and the graceful stop, which lets
 * requests in flight finish (at most `graceMs`, then their sockets are closed) before the disposer
 * stack closes everything the start opened, in reverse order.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Disposers } from '../lib/disposers.js';

export interface Listening {
  readonly url: string;
  readonly server: Server;
  /** Stops taking requests, waits for those in flight, then disposes of what was opened. */
  stop(graceMs?: number): Promise<void>;
}

export const listen = async (
  app: RequestListener,
  at: { readonly port: number; readonly host: string },
  onClientError: (error: Error, socket: Duplex) => void,
  opened: Disposers,
): Promise<Listening> => {
  const server = createServer(app);
  // What Node's parser refuses never reaches Express: answered in the envelope here (0005).
  server.on('clientError', onClientError);
  // Slow or idle clients must not hold sockets for ever (tablets on bad Wi-Fi open many).
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  server.keepAliveTimeout = 5_000;
  // A port already taken rejects here, and `startService` closes what was opened.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the server has no TCP address');
  const { port } = address satisfies AddressInfo;
  const host = at.host.includes(':') ? `[${at.host}]` : at.host;
  let stopping: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    server,
    stop(graceMs = 10_000) {
      stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        await closed;
        clearTimeout(timer);
        const failures = await opened.disposeAll();
        const first = failures[0];
        if (first !== undefined) throw first.error;
      })();
      return stopping;
    },
  };
};
