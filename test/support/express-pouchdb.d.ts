declare module 'express-pouchdb' {
  import type { RequestListener } from 'node:http';

  interface ExpressPouchDBOptions {
    mode?: 'fullCouchDB' | 'minimumForPouchDB' | 'custom';
    overrideMode?: { include?: string[]; exclude?: string[] };
    inMemoryConfig?: boolean;
    logPath?: string;
    configPath?: string;
  }
  type ExpressPouchDBApp = RequestListener & {
    listen(port: number, host: string, cb: () => void): import('node:http').Server;
  };
  const expressPouchDB: (PouchDB: unknown, options?: ExpressPouchDBOptions) => ExpressPouchDBApp;
  export default expressPouchDB;
}
