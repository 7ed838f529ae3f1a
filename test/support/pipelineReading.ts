/**
 * How the event pipeline reads an event document's latest change, as the feed hands it over: its
 * quarantine reason, or `aspect` / `skip` (decision 0063: what replaced the events guard's refusals).
 */
import type { Database } from '../../src/store/pouch.js';
import { decodeEventChange } from '../../src/sync/eventPipeline.js';

export const pipelineReading = async (db: Database, id: string): Promise<string> => {
  const feed = await db.changes({ since: 0, include_docs: true, doc_ids: [id] });
  const change = feed.results.find((c) => c.id === id);
  if (change === undefined) throw new Error(`${id}: not in the feed`);
  const rev = change.changes[0]?.rev;
  const decoded = decodeEventChange({
    id: change.id,
    seq: change.seq,
    deleted: change.deleted === true,
    ...(rev === undefined ? {} : { rev }),
    doc: change.doc,
  });
  return decoded.kind === 'quarantine' ? decoded.reason : decoded.kind;
};
