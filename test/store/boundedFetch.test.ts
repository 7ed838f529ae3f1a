import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { DeadlinePassed, runWithin, startDeadline } from '../../src/lib/deadline.js';
import { boundedFetch, isReadCall, patiently } from '../../src/store/boundedFetch.js';
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

  it('names the call that went silent, without its query (keys may be personal data)', async () => {
    const e = await failure(boundedFetch(200)(`${base}/silent?key=%22student%3Aana%22`, { method: 'post' }));
    expect(e).to.be.instanceOf(StoreTimeoutError);
    expect(String(e)).to.include('the store did not answer POST /silent for 200 ms');
    expect(String(e)).not.to.include('ana');
  });

  it('fails a call whose body stops half-way', async () => {
    // Read as PouchDB reads an answer: the call, then its body (read whole by the call itself, 0078).
    const e = await failure(boundedFetch(200)(`${base}/stalls-mid-body`).then((r) => r.text()));
    expect(e).to.be.instanceOf(StoreTimeoutError);
    expect(isStoreUnavailable(e)).to.equal(true);
  });

  it('waits four times the limit for a bulk write sent patiently, and only for it', async () => {
    handlers.set('/db/_bulk_docs', (_req, res) => {
      setTimeout(() => res.writeHead(201, { 'Content-Type': 'application/json' }).end('[]'), 400);
    });
    const fetch200 = boundedFetch(200);
    const post = () => fetch200(`${base}/db/_bulk_docs`, { method: 'POST', body: '{"docs":[]}' });
    // Silent 400 ms: past the limit, within four times it.
    expect((await patiently(post)).status).to.equal(201);
    expect(await failure(post())).to.be.instanceOf(StoreTimeoutError);
    // A call started from the patient write's continuation, after it, keeps the limit.
    const after = await patiently(async () => {
      await post();
      return 'answered';
    }).then(() => failure(post()));
    expect(after).to.be.instanceOf(StoreTimeoutError);
    // Still a limit: an answer that never starts fails, at four times it.
    const started = performance.now();
    expect(await failure(patiently(() => fetch200(`${base}/silent`)))).to.be.instanceOf(StoreTimeoutError);
    expect(performance.now() - started).to.be.at.least(4 * 200 - 20);
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

  describe("reads by the direct transport (Node's HTTP client, the answer read whole; decision 0078)", () => {
    // What the server saw of the last call to an echoing path.
    let seen: { method: string; headers: IncomingMessage['headers']; body: string } | undefined;
    const echo: Handler = (req, res) => {
      const parts: Uint8Array[] = [];
      req.on('data', (chunk: Uint8Array) => parts.push(chunk));
      req.on('end', () => {
        seen = {
          method: req.method ?? '',
          headers: req.headers,
          body: Buffer.concat(parts).toString('utf8'),
        };
        const answer = Buffer.from(JSON.stringify({ name: 'João Ünal', echoed: seen.body }), 'utf8');
        // Split inside a two-byte character: the answer is decoded whole, never chunk by chunk.
        const cut = answer.indexOf(Buffer.from('ã', 'utf8')) + 1;
        res.writeHead(201, { 'Content-Type': 'application/json', 'X-Couch-Request-ID': 'abc' });
        res.write(answer.subarray(0, cut));
        setTimeout(() => res.end(answer.subarray(cut)), 20);
      });
    };
    before(() => {
      handlers.set('/db/_all_docs', echo);
      handlers.set('/db/doc', echo);
      handlers.set('/db/_design/d/_view/v', (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.write('{"rows":[');
        setTimeout(() => res.socket?.destroy(), 20);
      });
    });

    it("sends the adapter's method, headers and body, and answers its status, headers and body", async () => {
      // PouchDB's http adapter passes node-fetch's Headers, and a lower-case method at times.
      const headers = new Headers({ Authorization: 'Basic YTpi', 'Content-Type': 'application/json' });
      const response = await boundedFetch(1_000)(`${base}/db/_all_docs?include_docs=true`, {
        method: 'post',
        headers,
        body: '{"keys":["a"]}',
      });
      expect(seen?.method).to.equal('POST');
      expect(seen?.headers.authorization).to.equal('Basic YTpi');
      expect(seen?.body).to.equal('{"keys":["a"]}');
      expect(response.status).to.equal(201);
      expect(response.ok).to.equal(true);
      expect(response.headers.get('x-couch-request-id')).to.equal('abc');
      expect(response.bodyUsed).to.equal(false);
      expect(await response.json()).to.deep.equal({ name: 'João Ünal', echoed: '{"keys":["a"]}' });
      expect(response.bodyUsed).to.equal(true);
      // Read once, as any Response.
      expect(await failure(response.text())).to.be.instanceOf(TypeError);
    });

    it('answers a Blob of the content type and the bytes (an attachment), and a clone of its own', async () => {
      const response = await boundedFetch(1_000)(`${base}/db/_all_docs`);
      expect(seen?.method).to.equal('GET');
      const blob = await response.clone().blob();
      expect(blob.type).to.equal('application/json');
      expect(JSON.parse(await blob.text())).to.deep.equal({ name: 'João Ünal', echoed: '' });
      expect(JSON.parse(Buffer.from(await response.arrayBuffer()).toString('utf8')).name).to.equal(
        'João Ünal',
      );
    });

    it('sends a write by fetch, as before, with the same answer', async () => {
      const response = await boundedFetch(1_000)(`${base}/db/doc`, {
        method: 'PUT',
        body: new TextEncoder().encode('ação'),
      });
      expect(seen?.method).to.equal('PUT');
      expect(seen?.body).to.equal('ação');
      expect(response.status).to.equal(201);
      expect(await response.json()).to.deep.equal({ name: 'João Ünal', echoed: 'ação' });
    });

    it('sends a read again once when its kept-alive socket was closed by the server as it went out', async () => {
      const read = () => boundedFetch(1_000)(`${base}/db/_all_docs`).then((r) => r.json());
      // Two reads at once leave two kept-alive sockets; the server closes them, and the next read goes
      // out before the client has seen that.
      await Promise.all([read(), read()]);
      server.closeAllConnections();
      expect(await read()).to.deep.equal({ name: 'João Ünal', echoed: '' });
    });

    it('a refused connection and a connection reset mid-answer count as the store unavailable', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const refused = await failure(boundedFetch(1_000)(`http://127.0.0.1:${port}/db/_all_docs`));
      expect(isStoreUnavailable(refused)).to.equal(true);
      const reset = await failure(boundedFetch(1_000)(`${base}/db/_design/d/_view/v`));
      expect(reset).not.to.be.instanceOf(StoreTimeoutError);
      expect(isStoreUnavailable(reset)).to.equal(true);
    });
  });

  describe("within a request's deadline (decision 0046)", () => {
    it('stops a silent call when the deadline passes, before its own limit', async () => {
      const deadline = startDeadline(150);
      const e = await failure(runWithin(deadline, () => boundedFetch(5_000)(`${base}/silent`)));
      // The deadline's error, not the silence limit's StoreTimeoutError.
      expect(e).to.be.instanceOf(DeadlinePassed);
      expect(isStoreUnavailable(e)).to.equal(true);
    });

    it('stops a body that still flows when the deadline passes', async () => {
      // Never 5 s silent, but about 0.5 s in all: past a deadline of 150 ms.
      const deadline = startDeadline(150);
      const e = await failure(
        runWithin(deadline, async () => (await boundedFetch(5_000)(`${base}/flows-slowly`)).text()),
      );
      expect(e).to.be.instanceOf(DeadlinePassed);
    });

    it('keeps its own silence limit when that is the shorter', async () => {
      const deadline = startDeadline(5_000);
      const e = await failure(runWithin(deadline, () => boundedFetch(100)(`${base}/silent`)));
      deadline.end();
      expect(e).to.be.instanceOf(StoreTimeoutError);
    });

    it('never cuts a write: it keeps its silence limit, so its writer learns whether it landed', async () => {
      const deadline = startDeadline(50);
      const e = await failure(
        runWithin(deadline, () => boundedFetch(300)(`${base}/silent`, { method: 'PUT', body: '{}' })),
      );
      expect(deadline.fired()).to.equal(true);
      expect(e).to.be.instanceOf(StoreTimeoutError);
    });

    const calls: ReadonlyArray<[string, string, string, boolean]> = [
      ['a document read', 'GET', '/chamada_private/student%3A1', true],
      ['database info', 'HEAD', '/chamada_private/', true],
      ['a batched read by keys', 'POST', '/chamada_private/_all_docs?include_docs=true', true],
      ['a replication read', 'POST', '/chamada_roster/_bulk_get?revs=true', true],
      ['a feed by ids', 'POST', '/chamada_events/_changes?filter=_doc_ids', true],
      ['a Mango query', 'POST', '/chamada_requests/_find', true],
      ['a view', 'POST', '/chamada_private/_design/idx/_view/by-name', true],
      ['revisions missing', 'POST', '/chamada_events/_revs_diff', true],
      ['a bulk write', 'POST', '/chamada_events/_bulk_docs', false],
      ['a document write', 'PUT', '/chamada_private/student%3A1', false],
      ['a new document', 'POST', '/chamada_private/', false],
      ['a deletion', 'DELETE', '/chamada_requests/idem%3Aab?rev=1-a', false],
      ['an index creation', 'POST', '/chamada_private/_index', false],
    ];
    for (const [what, method, path, read] of calls)
      it(`isReadCall: ${what} (${method}) ${read ? 'is a read, cut at the deadline' : 'writes, never cut'}`, () =>
        expect(isReadCall(method, `http://127.0.0.1:5984${path}`)).to.equal(read));

    it('never cuts a call of work that ended before its deadline (the request was answered)', async () => {
      const deadline = startDeadline(100);
      const text = runWithin(deadline, async () =>
        (await boundedFetch(5_000)(`${base}/flows-slowly`)).text(),
      );
      deadline.end();
      expect(JSON.parse(await text)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7]);
    });

    it('leaves a call made after the deadline fired to its own limit (the clean-up of the work)', async () => {
      const deadline = startDeadline(20);
      await deadline.passed;
      const text = runWithin(deadline, async () =>
        (await boundedFetch(5_000)(`${base}/flows-slowly`)).text(),
      );
      expect(JSON.parse(await text)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7]);
    });
  });
});
