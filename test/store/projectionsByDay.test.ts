/** Reading aspects by day a page at a time: every aspect of the range once, none outside it. */
import { expect } from 'chai';
import { aspectDocId } from '../../src/domain/projection.js';
import { projectionStore } from '../../src/store/projections.js';
import { embeddedStore } from '../support/storeBackends.js';

const aspectDoc = (n: number, kind: string, day: string) => {
  const aspect = `${kind}:s-${n}:x`;
  return {
    _id: aspectDocId(aspect),
    docType: 'aspect',
    aspect,
    kind,
    subjectId: `s-${n}`,
    sessionId: null,
    day,
    events: [],
    applied: [],
    superseded: [],
    waiting: [],
    version: null,
    state: null,
  };
};

describe('aspects by day, paged', () => {
  const store = embeddedStore('aspects-by-day', 'file');
  before(async () => {
    // 1,203 in range over several pages, plus others outside the days or of another kind.
    const docs = [
      ...Array.from({ length: 1203 }, (_, i) =>
        aspectDoc(i, 'checkin', i % 2 === 0 ? '2026-11-26' : '2026-11-27'),
      ),
      ...Array.from({ length: 40 }, (_, i) => aspectDoc(5000 + i, 'checkin', '2026-11-29')),
      ...Array.from({ length: 40 }, (_, i) => aspectDoc(6000 + i, 'attendance', '2026-11-26')),
    ];
    await store().db.projections.bulkDocs(docs);
  });

  it('visits each aspect of the kind and days once', async () => {
    const seen: string[] = [];
    await projectionStore(store().db.projections).eachAspectByDay(
      'checkin',
      '2026-11-26',
      '2026-11-28',
      (d) => seen.push(d.aspect),
    );
    expect(seen).to.have.length(1203);
    expect(new Set(seen).size).to.equal(1203);
    expect(seen.every((a) => a.startsWith('checkin:'))).to.equal(true);
  });

  it('visits nothing twice while aspects are added between pages', async () => {
    const seen: string[] = [];
    let added = 0;
    const writes: Array<Promise<unknown>> = [];
    await projectionStore(store().db.projections).eachAspectByDay(
      'checkin',
      '2026-11-26',
      '2026-11-26',
      (d) => {
        seen.push(d.aspect);
        // Aspects sorting first in the index shift the pages under the reader.
        if (seen.length % 200 === 0 && added < 3) {
          added += 1;
          writes.push(
            store().db.projections.put({
              ...aspectDoc(-added, 'checkin', '2026-11-26'),
              _id: aspectDocId(`checkin:a-${added}:x`),
              aspect: `checkin:a-${added}:x`,
            }),
          );
        }
      },
    );
    await Promise.all(writes);
    expect(added).to.equal(3);
    expect(new Set(seen).size).to.equal(seen.length);
    expect(seen.length).to.be.at.least(602);
  });

  it('asks the store for at most 50 documents at once (one LevelDB iterator each)', async () => {
    const db = store().db.projections;
    const allDocs = db.allDocs;
    let widest = 0;
    // pouchdb-find fetches each page's documents through this method of the same database.
    db.allDocs = ((...args: Parameters<typeof allDocs>) => {
      const [options] = args;
      if (options !== undefined && 'keys' in options) widest = Math.max(widest, options.keys.length);
      return allDocs.apply(db, args);
    }) as typeof allDocs;
    let seen = 0;
    try {
      await projectionStore(db).eachAspectByDay('checkin', '2026-11-26', '2026-11-28', () => {
        seen += 1;
      });
    } finally {
      db.allDocs = allDocs;
    }
    // The test above added three aspects on the 26th.
    expect(seen).to.be.at.least(1203);
    expect(widest).to.be.within(1, 50);
  });
});
