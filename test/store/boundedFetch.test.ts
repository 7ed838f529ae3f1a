import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { boundedFetch } from '../../src/store/boundedFetch.js';
import { isStoreUnavailable, StoreTimeoutError } from '../../src/store/storeErrors.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

describe('bounded fetch (CouchDB calls never wait for ever)', () => {
  let server: Server;
  let base = '';
  const handlers = new Map<string, Handler>();
  // Responses left hanging by the silent routes: ended in `after` so the server can close.
  const hanging: ServerResponse[] = [];

  before(async () => {
    server = createServer((req, res) => {
      const handler = handlers.get(new URL(req.url ?? '/', 'http://x').pathname);
      if (handler === undefined) res.writeHead(404).end();
      else handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    handlers.set('/silent', (_req, res) => hanging.push(res));
    handlers.set('/stalls-mid-body', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"rows":[');
      hanging.push(res);
    });
    handlers.set('/flows-slowly', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('[0');
      let i = 1;
      const tick = setInterval(() => {
        if (i === 8) {
          clearInterval(tick);
          res.end(']');
        } else res.write(`,${i++}`);
      }, 60);
    });
    handlers.set('/_changes', (_req, res) => {
      setTimeout(() => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"results":[]}'), 400);
    });
  });
  after(async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const failure = async (p: Promise<unknown>): Promise<unknown> =>
    p.then(
      () => undefined,
      (e: unknown) => e,
    );

  it('fails a call whose answer never starts with StoreTimeoutError, which counts as unavailable', async () => {
    const e = await failure(boundedFetch(200)(`${base}/silent`));
    expect(e).to.be.instanceOf(StoreTimeoutError);
    expect(isStoreUnavailable(e)).to.equal(true);
  });

  it('fails a call whose body stops half-way', async () => {
    const response = await boundedFetch(200)(`${base}/stalls-mid-body`);
    expect(response.status).to.equal(200);
    const e = await failure(response.text());
    expect(e).to.be.instanceOf(StoreTimeoutError);
    expect(isStoreUnavailable(e)).to.equal(true);
  });

  it('lets an answer that keeps flowing run longer than the limit in total', async () => {
    // Eight chunks 60 ms apart: about 0.5 s in all, never 200 ms silent.
    const response = await boundedFetch(200)(`${base}/flows-slowly`);
    expect(JSON.parse(await response.text())).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('gives a live longpoll feed its heartbeat on top of the limit', async () => {
    const longpoll = await boundedFetch(200)(`${base}/_changes?feed=longpoll&since=0`);
    expect(await longpoll.json()).to.deep.equal({ results: [] });
    const e = await failure(boundedFetch(200)(`${base}/_changes?since=0`));
    expect(e).to.be.instanceOf(StoreTimeoutError);
  });

  it('still honours the caller’s own abort, as that abort', async () => {
    const caller = new AbortController();
    const pending = failure(boundedFetch(5_000)(`${base}/silent`, { signal: caller.signal }));
    await sleep(50);
    caller.abort(new Error('cancelled by the feed'));
    const e = await pending;
    expect(e).not.to.be.instanceOf(StoreTimeoutError);
    expect(String(e)).to.include('cancelled by the feed');
  });
});
