/** How store failures are read: conflicts on both backends, refused bulk results, an unreachable store. */

import { createServer } from 'node:http';
import { expect } from 'chai';
import { DeadlinePassed } from '../../src/lib/deadline.js';
import { isConflict, isStored, isStoreUnavailable } from '../../src/store/storeErrors.js';

describe('store errors', () => {
  const conflicts: ReadonlyArray<[string, unknown, boolean]> = [
    ['embedded adapter: status 409', { status: 409, name: 'conflict', error: true }, true],
    [
      'CouchDB bulk result: error "conflict", no status',
      { id: 'a', error: 'conflict', reason: 'Document update conflict.' },
      true,
    ],
    ['CouchDB bulk result: error "forbidden"', { id: 'a', error: 'forbidden', reason: 'immutable' }, false],
    ['not found', { status: 404, error: true }, false],
    ['nothing', undefined, false],
  ];
  for (const [name, e, expected] of conflicts)
    it(`isConflict: ${name}`, () => expect(isConflict(e)).to.equal(expected));

  const stored: ReadonlyArray<[string, PouchDB.Core.Response | PouchDB.Core.Error, boolean]> = [
    ['ok', { ok: true, id: 'a', rev: '1-a' }, true],
    ['embedded refusal', { status: 409, name: 'conflict', error: true }, false],
    ['CouchDB refusal, error as a string', { id: 'a', error: 'forbidden', reason: 'no' }, false],
  ];
  for (const [name, r, expected] of stored)
    it(`isStored: ${name}`, () => expect(isStored(r)).to.equal(expected));

  const unavailable: ReadonlyArray<[string, unknown, boolean]> = [
    [
      'connection refused',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5984'), { code: 'ECONNREFUSED' }),
      true,
    ],
    ['a fetch failure', Object.assign(new Error('request failed'), { name: 'FetchError' }), true],
    [
      'disk full (LevelDB)',
      { status: 500, message: 'IO error: /data/chamada_events/000005.log: No space left on device' },
      true,
    ],
    ['disk full (errno)', { code: 'ENOSPC' }, true],
    ["the request's deadline passed", new DeadlinePassed(6000), true],
    [
      "the request's deadline, as the cause of the adapter's error",
      new Error('fetch failed', { cause: new DeadlinePassed(6000) }),
      true,
    ],
    [
      'the server closed the connection (Node fetch)',
      new TypeError('fetch failed', {
        cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
      }),
      true,
    ],
    ['a conflict', { status: 409, error: true }, false],
    ['a plain bug', new TypeError('x is undefined'), false],
  ];
  for (const [name, e, expected] of unavailable)
    it(`isStoreUnavailable: ${name}`, () => expect(isStoreUnavailable(e)).to.equal(expected));

  it('isStoreUnavailable: what Node fetch throws when the server closes the connection before answering', async () => {
    const server = createServer((req) => req.socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('no port');
      const failed = await fetch(`http://127.0.0.1:${address.port}/db/_bulk_docs`, {
        method: 'POST',
        body: '{}',
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(failed).to.be.instanceOf(TypeError);
      expect(isStoreUnavailable(failed)).to.equal(true);
    } finally {
      server.close();
    }
  });
});
