/**
 * How the event pipeline reads an event document's latest change, as the feed hands it over: its
 * quarantine reason, or `aspect` / `skip` (decision 0063: what replaced the events guard's refusals).
 */
import type { Database } from '../../src/store/pouch.js';
import { decodeEventChange } from '../../src/sync/eventPipeline.js';
import { readUntil } from './readUntil.js';

/**
 * A cluster's feed merges one copy of each shard range, and a write acknowledged by a quorum may not
 * be on that copy yet (a CI run read "not in the feed" just after a stored event): the feed is read
 * again until it lists the document, and at `rev` when given.
 */
export const pipelineReading = async (
  db: Database,
  id: string,
  { rev }: { readonly rev?: string } = {},
): Promise<string> => {
  const changeOf = (feed: PouchDB.Core.ChangesResponse<object>) => feed.results.find((c) => c.id === id);
  const feed = await readUntil(
    () => db.changes({ since: 0, include_docs: true, doc_ids: [id] }),
    (f) => {
      const change = changeOf(f);
      return change !== undefined && (rev === undefined || change.changes[0]?.rev === rev);
    },
  );
  const change = changeOf(feed);
  if (change === undefined) throw new Error(`${id}: not in the feed`);
  const latest = change.changes[0]?.rev;
  if (rev !== undefined && latest !== rev)
    throw new Error(`${id}: the feed at ${latest ?? 'no revision'}, not ${rev}`);
  const decoded = decodeEventChange({
    id: change.id,
    seq: change.seq,
    deleted: change.deleted === true,
    ...(latest === undefined ? {} : { rev: latest }),
    doc: change.doc,
  });
  return decoded.kind === 'quarantine' ? decoded.reason : decoded.kind;
};
