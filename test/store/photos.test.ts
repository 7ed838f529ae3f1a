/**
 * The photo store on the embedded LevelDB and over the CouchDB protocol: the metadata and both
 * images read back byte for byte, a second photo replaces the first, removal leaves nothing.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { type NewPhoto, type PhotoStore, photoDocId, photoStore } from '../../src/store/photos.js';
import type { Database } from '../../src/store/pouch.js';
import { type StoreHost, storeBackends } from '../support/storeBackends.js';

const photo = (studentId: string, photoRef: string): NewPhoto => ({
  studentId,
  photoRef,
  width: 4,
  height: 3,
  bytes: 300,
  thumbWidth: 2,
  thumbHeight: 1,
  thumbBytes: 100,
  consentId: randomUUID(),
  uploadedAt: '2026-03-01T12:00:00.000Z',
  uploadedBy: 'dev-cadastro',
});

/** Bytes that are every value once and then some: nothing a text round trip would keep. */
const bytesOf = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 7 + seed) % 256);

for (const [label, host] of storeBackends('photos'))
  describe(`photo store on ${label}`, function () {
    this.timeout(60_000);
    let server: StoreHost;
    let db: Database;
    let photos: PhotoStore;

    beforeEach(async () => {
      server = await host();
      db = server.open(`photos_${randomUUID().slice(0, 8)}`);
      photos = photoStore(db);
    });
    afterEach(async () => {
      await db.destroy();
      await server.dispose();
    });

    it('reads back the metadata and both images byte for byte', async () => {
      const id = randomUUID();
      const full = bytesOf(300, 1);
      const thumb = bytesOf(100, 2);
      const stored = await photos.put(photo(id, 'photos/a.jpg'), { full, thumb });
      expect(stored._id).to.equal(photoDocId(id));
      expect(await photos.get(id)).to.deep.include({ studentId: id, photoRef: 'photos/a.jpg', width: 4 });
      expect(await photos.image(id, 'full')).to.deep.equal(full);
      expect(await photos.image(id, 'thumb')).to.deep.equal(thumb);
    });

    it('a second photo replaces the first', async () => {
      const id = randomUUID();
      await photos.put(photo(id, 'photos/a.jpg'), { full: bytesOf(50, 1), thumb: bytesOf(10, 1) });
      await photos.put(photo(id, 'photos/b.jpg'), { full: bytesOf(60, 3), thumb: bytesOf(12, 3) });
      expect((await photos.get(id))?.photoRef).to.equal('photos/b.jpg');
      expect(await photos.image(id, 'full')).to.deep.equal(bytesOf(60, 3));
    });

    it('removal leaves no metadata and no image; an unknown student has neither', async () => {
      const id = randomUUID();
      await photos.put(photo(id, 'photos/a.jpg'), { full: bytesOf(50, 1), thumb: bytesOf(10, 1) });
      expect(await photos.remove(id)).to.equal(true);
      expect(await photos.get(id)).to.equal(undefined);
      expect(await photos.image(id, 'full')).to.equal(undefined);
      expect(await photos.image(id, 'thumb')).to.equal(undefined);
      expect(await photos.remove(id)).to.equal(false);
      expect(await photos.image(randomUUID(), 'thumb')).to.equal(undefined);
    });
  });
