/** The kiosk's static files (decision 0020), served from a build-shaped fixture folder. */
import { mkdir, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import path from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import express from 'express';
import {
  IMMUTABLE,
  KIOSK_BASE,
  KIOSK_PERMISSIONS_POLICY,
  kioskRouter,
  REVALIDATE,
} from '../../src/http/kioskStatic.js';
import { requestLog } from '../../src/http/middleware/requestLog.js';
import { SECURITY_HEADERS, securityHeaders } from '../../src/http/middleware/securityHeaders.js';
import { createLogger } from '../../src/log/logger.js';
import { call, expectEnvelope } from '../support/http.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

const serve = async (dir: string): Promise<{ url: string; server: Server; log: () => string }> => {
  let log = '';
  const logger = createLogger(
    'info',
    new Writable({
      write(chunk: Buffer, _enc, done) {
        log += chunk.toString('utf8');
        done();
      },
    }),
  );
  const app = express();
  app.use(requestLog(logger, () => new Date()));
  app.use(securityHeaders);
  app.use(KIOSK_BASE, kioskRouter(logger, dir));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening on a port');
  return { url: `http://127.0.0.1:${address.port}`, server, log: () => log };
};

describe('kiosk static files', () => {
  let dir: string;
  before(async () => {
    dir = await makeTempDir('kiosk');
    await mkdir(path.join(dir, 'built', 'assets'), { recursive: true });
    await writeFile(path.join(dir, 'built', 'index.html'), '<!doctype html><title>k</title>');
    await writeFile(path.join(dir, 'built', 'sw.js'), 'self.addEventListener("fetch", () => {});');
    await writeFile(path.join(dir, 'built', 'manifest.webmanifest'), '{}');
    await writeFile(path.join(dir, 'built', 'assets', 'index-Ab12Cd.js'), 'export {};');
    await mkdir(path.join(dir, 'empty'));
  });
  after(() => removeDir(dir));

  it('serves index.html at /kiosk/ revalidated, hashed assets immutable, with the right types', async () => {
    const { url, server } = await serve(path.join(dir, 'built'));
    try {
      const index = await call(`${url}/kiosk/`);
      expect(index.status).to.equal(200);
      expect(index.headers.get('content-type')).to.match(/^text\/html/);
      expect(index.headers.get('cache-control')).to.equal(REVALIDATE);
      // The contract's headers, but the camera allowed to the kiosk's own pages (0053: scanning passes).
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
        expect(index.headers.get(name), name).to.equal(
          name === 'Permissions-Policy' ? KIOSK_PERMISSIONS_POLICY : value,
        );
      }
      expect(KIOSK_PERMISSIONS_POLICY).to.match(/(^|, )camera=\(self\)/);
      const asset = await call(`${url}/kiosk/assets/index-Ab12Cd.js`);
      expect(asset.headers.get('content-type')).to.match(/^text\/javascript/);
      expect(asset.headers.get('cache-control')).to.equal(IMMUTABLE);
      const worker = await call(`${url}/kiosk/sw.js`);
      expect(worker.headers.get('content-type')).to.match(/^text\/javascript/);
      expect(worker.headers.get('cache-control')).to.equal(REVALIDATE);
      const manifest = await call(`${url}/kiosk/manifest.webmanifest`);
      expect(manifest.headers.get('content-type')).to.match(/^application\/manifest\+json/);
    } finally {
      server.close();
    }
  });

  it('redirects /kiosk to /kiosk/ and answers a missing file with the 404 envelope', async () => {
    const { url, server } = await serve(path.join(dir, 'built'));
    try {
      const bare = await call(`${url}/kiosk?lang=en`, { redirect: 'manual' });
      expect(bare.status).to.equal(301);
      expect(bare.headers.get('location')).to.equal('/kiosk/?lang=en');
      const missing = await call(`${url}/kiosk/nope.js`);
      expectEnvelope(missing, 404, 'NOT_FOUND');
      // Only the kiosk's own files allow the camera.
      expect(missing.headers.get('permissions-policy')).to.equal(SECURITY_HEADERS['Permissions-Policy']);
    } finally {
      server.close();
    }
  });

  it('says how to build the kiosk when it is not built, in the answer and in the log', async () => {
    const { url, server, log } = await serve(path.join(dir, 'empty'));
    try {
      const envelope = expectEnvelope(await call(`${url}/kiosk/`), 404, 'NOT_FOUND');
      expect(envelope.message).to.contain('npm run build');
      expect(log()).to.contain('npm run build');
    } finally {
      server.close();
    }
  });
});
