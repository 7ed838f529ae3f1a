/**
 * A proxy in front of a CouchDB-protocol server that answers 500 to the requests a test names, without
 * passing them on (the server never sees them), and passes every other request through as it streams
 * (a live `_changes` feed stays open as long as the server keeps it).
 */
import { Agent, createServer, request } from 'node:http';
import { listenAsProxyOf } from './stallingStore.js';

export interface FailingProxy {
  /** The proxy's URL with the target's credentials, for the service's COUCHDB_URL. */
  readonly url: string;
  /** Refuses the requests `which` picks from now on (until `failNone`), counting them. */
  fail(which: (method: string, path: string) => boolean): void;
  failNone(): void;
  /** How many requests were refused. */
  refused(): number;
  /**
   * Passes the requests `which` picks on to the server, and holds each answer `ms` before sending it
   * (the server has done the work; its answer is late): a write whose answer outlasts the client's
   * silence limit. Until `holdNone`.
   */
  holdAnswers(which: (method: string, path: string) => boolean, ms: number): void;
  holdNone(): void;
  /** How many answers were held. */
  held(): number;
  close(): Promise<void>;
}

export const failingProxy = async (target: string): Promise<FailingProxy> => {
  const to = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  let which: ((method: string, path: string) => boolean) | undefined;
  let refused = 0;
  let holding: { readonly which: (method: string, path: string) => boolean; readonly ms: number } | undefined;
  let held = 0;
  const server = createServer((req, res) => {
    const holdMs = holding?.which(req.method ?? 'GET', req.url ?? '/') === true ? holding.ms : 0;
    if (holdMs > 0) held += 1;
    if (which?.(req.method ?? 'GET', req.url ?? '/') === true) {
      refused += 1;
      req.resume();
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'unknown_error', reason: 'refused by the test proxy' }));
      return;
    }
    const up = request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers, agent },
      (upstream) => {
        const answer = () => {
          res.writeHead(upstream.statusCode ?? 502, upstream.headers);
          upstream.pipe(res);
        };
        upstream.on('error', () => res.destroy());
        if (holdMs > 0) setTimeout(answer, holdMs);
        else answer();
      },
    );
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    req.pipe(up);
  });
  return {
    url: await listenAsProxyOf(server, target),
    fail: (w) => {
      which = w;
    },
    failNone: () => {
      which = undefined;
    },
    refused: () => refused,
    holdAnswers: (which, ms) => {
      holding = { which, ms };
    },
    holdNone: () => {
      holding = undefined;
    },
    held: () => held,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        agent.destroy();
      }),
  };
};
