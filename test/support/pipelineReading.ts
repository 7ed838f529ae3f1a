/**
 * How the event pipeline reads an event document's latest change, as the feed hands it over: its
 * quarantine reason, or `aspect` / `skip` (decision 0063: what replaced the events guard's refusals).
 */
import type { Database } from '../../src/store/pouch.js';
import { decodeEventChange } from '../../src/sync/eventPipeline.js';

/**
 * A cluster's feed merges one copy of each shard range, and a write acknowledged by a quorum may not
 * be on that copy yet (a CI run read "not in the feed" just after a stored event): the feed is read
 * again until it lists the document, and at `rev` when given, for up to `withinMs`.
 */
export const pipelineReading = async (
  db: Database,
  id: string,
  { rev, withinMs = 5_000 }: { readonly rev?: string; readonly withinMs?: number } = {},
): Promise<string> => {
  const until = Date.now() + withinMs;
  for (;;) {
    const feed = await db.changes({ since: 0, include_docs: true, doc_ids: [id] });
    const change = feed.results.find((c) => c.id === id);
    const latest = change?.changes[0]?.rev;
    if (change !== undefined && (rev === undefined || latest === rev)) {
      const decoded = decodeEventChange({
        id: change.id,
        seq: change.seq,
        deleted: change.deleted === true,
        ...(latest === undefined ? {} : { rev: latest }),
        doc: change.doc,
      });
      return decoded.kind === 'quarantine' ? decoded.reason : decoded.kind;
    }
    if (Date.now() > until)
      throw new Error(
        change === undefined
          ? `${id}: not in the feed after ${withinMs} ms`
          : `${id}: the feed still at ${latest ?? 'no revision'}, not ${rev ?? ''}, after ${withinMs} ms`,
      );
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};
