import { once } from 'node:events';
import { expect } from 'chai';
import { startService } from '../src/service.js';
import { openStore } from '../src/store/store.js';
import { useService } from './support/harness.js';
import { call } from './support/http.js';
import { collect, listeningUrl, startMain } from './support/mainProcess.js';
import { probeRoutes, slowRoute } from './support/probeRoutes.js';
import { makeTempDir, removeDir } from './support/tempDir.js';
import { DEV_TOKENS, testConfig } from './support/testService.js';

describe('graceful stop (in process)', () => {
  const h = useService({ routes: probeRoutes([slowRoute(400)]) });
  it('finishes an in-flight request, then refuses new connections and closes the store', async () => {
    const svc = h.svc;
    const inFlight = call(`${svc.url}/api/v1/_probe/slow`);
    await new Promise((r) => setTimeout(r, 100));
    const stopped = svc.stop();
    const r = await inFlight;
    expect(r.status).to.equal(200);
    expect(r.json).to.deep.equal({ done: true });
    await stopped;
    const refused = await fetch(`${svc.url}/api/v1/health`).then(
      () => false,
      () => true,
    );
    expect(refused).to.equal(true);
    expect(await svc.store.ping()).to.equal(false);
  });
});

describe('a start that fails half-way (in process)', () => {
  const taken = useService();
  it('closes what it opened: the data directory opens again at once', async () => {
    const dir = await makeTempDir('half-start');
    try {
      const port = Number(new URL(taken.url).port);
      const failed = await startService(
        testConfig({ DATA_DIR: dir, AUTH_MODE: 'dev', ...DEV_TOKENS, PORT: String(port) }),
        {},
      ).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(String(failed)).to.match(/EADDRINUSE/);
      // The LevelDB lock is released with the store: opening the same directory works.
      const again = await openStore({ kind: 'embedded', dataDir: dir, prefix: 'chamada_' });
      expect(await again.ping()).to.equal(true);
      await again.close();
    } finally {
      await removeDir(dir);
    }
  });
});

describe('the process (src/main.ts)', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(async () => {
    dir = await makeTempDir('main');
  });
  afterEach(() => removeDir(dir));

  it('starts with no configuration but a port and data dir, serves health, and exits 0 on SIGTERM', async () => {
    const child = startMain({ PORT: '0', DATA_DIR: dir });
    const stdout = collect(child.stdout);
    const url = await listeningUrl(stdout);
    expect((await call(`${url}/api/v1/health`)).status).to.equal(200);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).to.equal(0);
    expect(stdout()).to.contain('"msg":"stopped"');
    // The leveldb lock was released: the same data dir opens again.
    const store = await openStore({ kind: 'embedded', dataDir: dir, prefix: 'chamada_' });
    expect(await store.ping()).to.equal(true);
    await store.close();
  });

  it('refuses a bad configuration with exit code 2 and a message naming the variable', async () => {
    const child = startMain({ PORT: 'eighty', DATA_DIR: dir });
    const stderr = collect(child.stderr);
    const [code] = await once(child, 'exit');
    expect(code).to.equal(2);
    expect(stderr()).to.contain('PORT');
  });
});
