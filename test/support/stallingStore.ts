/**
 * Stores that stop answering on demand, for the request deadline (decision 0046):
 * - `stallingLevelDown`: the embedded store's LevelDB behind a switch that holds every call (reads,
 *   writes, iterator steps) until it is switched back, as a disk that stalls would. Nothing is lost or
 *   refused: held calls run, in order, when it resumes.
 * - `freezingProxy`: an HTTP proxy in front of a CouchDB-protocol server that freezes as a node under
 *   SIGSTOP does: it keeps taking requests and sends nothing back. When it thaws, every request it held
 *   reaches the server, even one whose client has given up meanwhile, so a write lands after its
 *   client was answered (as the bytes in a frozen node's socket buffer do).
 */
import { Agent, createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import leveldown from 'leveldown';
import { guardedLevelDown, type LevelDownFactory } from '../../src/store/guardedLevel.js';

/** Listens on a free loopback port; answers `target` (credentials and path kept) with that port. */
export const listenAsProxyOf = async (server: Server, target: string): Promise<string> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address: AddressInfo | string | null = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
  const url = new URL(target);
  url.host = `127.0.0.1:${address.port}`;
  return url.toString().replace(/\/$/, '');
};

export interface Stall {
  /** From now on, calls are held. */
  stall(): void;
  /** Held calls run, in the order they came, and later ones go straight through. */
  resume(): void;
  /** Calls held right now. */
  held(): number;
}

/** Holds `run` while stalled; FIFO, so what came first runs first at the resume. */
const gate = () => {
  let stalled = false;
  const waiting: Array<() => void> = [];
  return {
    through: (run: () => void) => {
      if (stalled) waiting.push(run);
      else run();
    },
    stall: () => {
      stalled = true;
    },
    resume: () => {
      stalled = false;
      for (const run of waiting.splice(0)) run();
    },
    held: () => waiting.length,
  };
};

export const stallingLevelDown = (): Stall & { readonly factory: LevelDownFactory } => {
  const g = gate();
  const open = (location: string): leveldown.LevelDown => {
    const real = leveldown(location);
    return {
      location,
      get status() {
        return real.status;
      },
      open: (options, callback) => real.open(options, callback),
      close: (callback) => real.close(callback),
      get: (key, options, callback) => g.through(() => real.get(key, options, callback)),
      put: (key, value, options, callback) => g.through(() => real.put(key, value, options, callback)),
      del: (key, options, callback) => g.through(() => real.del(key, options, callback)),
      batch: (ops, options, callback) => g.through(() => real.batch(ops, options, callback)),
      clear: (options, callback) => g.through(() => real.clear(options, callback)),
      iterator: (options) => {
        const it = real.iterator(options);
        return {
          next: (callback) => g.through(() => it.next(callback)),
          end: (callback) => it.end(callback),
          seek: (target) => it.seek(target),
        };
      },
    };
  };
  return { factory: guardedLevelDown({ open }), stall: g.stall, resume: g.resume, held: g.held };
};

export interface FreezingProxy extends Stall {
  /** The proxy's URL with the target's credentials, for the service's COUCHDB_URL. */
  readonly url: string;
  close(): Promise<void>;
}

export const freezingProxy = async (target: string): Promise<FreezingProxy> => {
  const to = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const g = gate();
  const server = createServer((req, res) => {
    // The request is taken whole whether frozen or not: a frozen node's kernel takes the bytes too.
    const chunks: Uint8Array[] = [];
    let clientGone = false;
    let answer: IncomingMessage | undefined;
    res.on('close', () => {
      clientGone = true;
      // A feed the client left is closed at the thaw; a write's answer is awaited first (below).
      const upstream = answer;
      if (upstream !== undefined) g.through(() => upstream.destroy());
    });
    req.on('data', (chunk: Uint8Array) => chunks.push(chunk));
    req.on('end', () =>
      g.through(() => {
        const up = request(
          {
            host: to.hostname,
            port: to.port,
            method: req.method,
            path: req.url,
            headers: req.headers,
            agent,
          },
          (upstream) => {
            // Answered: the server has done what the request asked, whether or not anyone listens now.
            if (clientGone) {
              upstream.destroy();
              return;
            }
            answer = upstream;
            g.through(() => {
              if (!res.destroyed) res.writeHead(upstream.statusCode ?? 502, upstream.headers);
            });
            upstream.on('data', (chunk: Buffer) =>
              g.through(() => {
                if (!res.destroyed) res.write(chunk);
              }),
            );
            upstream.on('end', () => g.through(() => res.end()));
            upstream.on('error', () => res.destroy());
          },
        );
        up.on('error', () => res.destroy());
        up.end(Buffer.concat(chunks));
      }),
    );
  });
  return {
    url: await listenAsProxyOf(server, target),
    stall: g.stall,
    resume: g.resume,
    held: g.held,
    async close() {
      g.resume();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
};
