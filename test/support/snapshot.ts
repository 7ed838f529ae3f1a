import type { Database } from '../../src/store/pouch.js';

/** Every document of a database but design documents, without revisions, sorted by id. */
export const snapshot = async (db: Database): Promise<unknown[]> => {
  const all = await db.allDocs({ include_docs: true });
  return all.rows
    .filter((r) => !r.id.startsWith('_design/'))
    .map((r) => {
      const { _rev: _r, ...rest } = r.doc ?? { _rev: '' };
      // When a quarantine was first detected is not derived from the events: a rebuild detects it again.
      if (r.id.startsWith('quarantine:') && 'detectedAt' in rest) {
        const { detectedAt: _d, ...kept } = rest;
        return kept;
      }
      return rest;
    });
};
