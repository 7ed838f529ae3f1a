/**
 * An HTTP proxy in front of CouchDB that counts the requests passing through it, by database and
 * kind (`_changes`, `_bulk_docs`, `_all_docs`, a document read, …): how many store round trips one
 * check-in or one student creation costs. Bodies stream through untouched (a long-poll `_changes`
 * stays open as long as CouchDB keeps it).
 */
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CountingProxy {
  /** The proxy's URL with the target's credentials, for the service's COUCHDB_URL. */
  readonly url: string;
  total(): number;
  /** Counts by kind since the last reset. */
  counts(): ReadonlyMap<string, number>;
  reset(): void;
  close(): Promise<void>;
}

/** `GET private doc student`, `POST events _bulk_docs`, `GET projections _changes`: what a request is. */
export const kindOf = (method: string, path: string, prefix: string): string => {
  const [db = '', part = ''] =
    path
      .split('?')[0]
      ?.split('/')
      .filter((s) => s !== '') ?? [];
  const name = db.startsWith(prefix) ? db.slice(prefix.length) : db;
  const id = decodeURIComponent(part);
  // A document by the kind its id starts with (`classSession`, `checkin`, …): which reads a cache saves.
  const what = part === '' ? 'database' : id.startsWith('_') ? id : `doc ${id.split(':')[0]}`;
  return `${method} ${name} ${what}`;
};

export const countingProxy = async (target: string, prefix: string): Promise<CountingProxy> => {
  const to = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  let counts = new Map<string, number>();
  let total = 0;
  const server = createServer((req, res) => {
    const kind = kindOf(req.method ?? 'GET', req.url ?? '/', prefix);
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
    total += 1;
    const upstream = request(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: to.host },
        agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address: AddressInfo | string | null = server.address();
  if (address === null || typeof address === 'string') throw new Error('the counting proxy has no port');
  const { port } = address;
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString().replace(/\/$/, ''),
    total: () => total,
    counts: () => counts,
    reset() {
      counts = new Map();
      total = 0;
    },
    async close() {
      const closed = new Promise<void>((ok) => server.close(() => ok()));
      server.closeAllConnections();
      agent.destroy();
      await closed;
    },
  };
};
