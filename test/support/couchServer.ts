/**
 * A CouchDB-protocol server on loopback for tests: express-pouchdb on its own Express 4 app, backed
 * by leveldb in a temp dir. It stands in for CouchDB 3; CouchDB-only behaviour is documented, not tested.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import expressPouchDB from 'express-pouchdb';
import { PouchDB } from '../../src/store/pouch.js';
import { makeTempDir, removeDir } from './tempDir.js';

export interface CouchServer {
  readonly url: string;
  /** Stops listening and drops open connections, as a crashed server would. */
  stop(): Promise<void>;
  /** Listens again on the same port, with the same data. */
  restart(): Promise<void>;
  dispose(): Promise<void>;
}

const listen = (server: Server, port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      const address: AddressInfo | string | null = server.address();
      if (address === null || typeof address === 'string') reject(new Error('no address'));
      else resolve(address.port);
    });
  });

/** `validation: true` runs `validate_doc_update` functions, as CouchDB does. */
export const startCouchServer = async (options: { validation?: boolean } = {}): Promise<CouchServer> => {
  const dir = await makeTempDir('couch');
  const Backend = PouchDB.defaults({ prefix: `${join(dir, 'db')}-` });
  const app = expressPouchDB(Backend, {
    mode: 'minimumForPouchDB',
    overrideMode: { include: ['routes/find', ...(options.validation === true ? ['validation'] : [])] },
    inMemoryConfig: true,
  });
  let server = createServer(app);
  const port = await listen(server, 0);
  let running = true;
  const stop = async () => {
    if (!running) return;
    running = false;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    stop,
    async restart() {
      if (running) return;
      server = createServer(app);
      await listen(server, port);
      running = true;
    },
    async dispose() {
      await stop();
      await removeDir(dir);
    },
  };
};
