/**
 * A graceful restart on the embedded store reads the student directory from the snapshot the stop
 * wrote (decision 0040), black-box: what the students list answers is the same before and after, a
 * change stored after the snapshot's sequence is there too, and no snapshot file is left while the
 * service runs (so a crash leaves none a start would trust).
 */
import { existsSync } from 'node:fs';
import { expect } from 'chai';
import { StudentPage } from '../../src/domain/student.js';
import { type Database, PouchDB } from '../../src/store/pouch.js';
import { databaseAddress, storeLocation } from '../../src/store/store.js';
import { call, decodeAs } from '../support/http.js';
import { seedSmallRoster } from '../support/seed.js';
import { authHeaders, DEV_TOKENS, startTestService, type TestService } from '../support/testService.js';

const READ_FROM_SNAPSHOT = 'student directory read from its snapshot';

describe('the student directory across a graceful restart (embedded store)', function () {
  this.timeout(60_000);
  const services: TestService[] = [];
  afterEach(async () => {
    // The last one removes the shared data folder; the others are stopped already.
    for (const s of services.splice(0).reverse()) await s.dispose();
  });
  const start = async (dataDir?: string) => {
    const svc = await startTestService(dataDir === undefined ? {} : { env: { DATA_DIR: dataDir } });
    services.push(svc);
    return svc;
  };
  const snapshotOf = (svc: TestService) =>
    `${databaseAddress(storeLocation(svc.deps.config), 'private')}.directory.json`;
  const list = async (svc: TestService) => {
    const r = await call(`${svc.url}/api/v1/students?limit=50`, {
      headers: authHeaders(DEV_TOKENS.DEV_ADMIN_TOKEN),
    });
    expect(r.status, r.text).to.equal(200);
    return decodeAs(StudentPage, r.json).items;
  };
  const readFromSnapshot = (svc: TestService) => svc.logLines().find((l) => l.msg === READ_FROM_SNAPSHOT);

  it('lists the same students after the restart, read from the snapshot, and keeps no file while running', async () => {
    const first = await start();
    await seedSmallRoster(first.url, ['Ana Souza', 'Bruno Lima', 'Carla Dias']);
    const before = await list(first);
    expect(readFromSnapshot(first), 'a first start has none').to.equal(undefined);
    await first.stop(1000);
    expect(existsSync(snapshotOf(first)), 'written by the graceful stop').to.equal(true);

    const second = await start(first.deps.config.dataDir);
    // Changes since the snapshot's sequence (a write the feed had not delivered when the stop came)
    // are applied from the feed: their number depends on timing, the list must not.
    expect(readFromSnapshot(second)).to.include({ students: 3 });
    expect(existsSync(snapshotOf(second)), 'removed once read').to.equal(false);
    expect(await list(second)).to.deep.equal(before);
  });

  it('brings in what was stored after the snapshot was written', async () => {
    const first = await start();
    const { studentIds } = await seedSmallRoster(first.url, ['Ana Souza', 'Bruno Lima']);
    await first.stop(1000);
    // A write the directory's feed never saw before the stop (a late write-through, say), made on
    // the store itself while the service is stopped.
    const db: Database = new PouchDB(databaseAddress(storeLocation(first.deps.config), 'private'));
    const ana: Record<string, unknown> = await db.get(`student:${studentIds[0]}`);
    await db.put({ ...ana, displayName: 'Ana Souza Lima', updatedAt: new Date().toISOString() });
    await db.close();

    const second = await start(first.deps.config.dataDir);
    const read = readFromSnapshot(second);
    expect(read).to.include({ students: 2 });
    expect(read?.changesSince).to.be.at.least(1);
    const names = async () => (await list(second)).map((s) => s.displayName);
    // The feed applies it moments after the start.
    for (let i = 0; i < 50 && !(await names()).includes('Ana Souza Lima'); i += 1)
      await new Promise((r) => setTimeout(r, 20));
    expect(await names()).to.deep.equal(['Ana Souza Lima', 'Bruno Lima']);
  });

  it('writes the next snapshot with what changed since the last start', async () => {
    const first = await start();
    await seedSmallRoster(first.url, ['Ana Souza']);
    await first.stop(1000);
    const second = await start(first.deps.config.dataDir);
    await seedSmallRoster(second.url, ['Davi Rocha']);
    await second.stop(1000);
    const third = await start(first.deps.config.dataDir);
    expect(readFromSnapshot(third)).to.include({ students: 2 });
    expect((await list(third)).map((s) => s.displayName)).to.deep.equal(['Ana Souza', 'Davi Rocha']);
  });
});
