/**
 * The roster a tablet should end with: every live document the server's replication feed lists, at
 * its revision (the crash rows compare a tablet's pull with it).
 */
import * as t from 'io-ts';
import { call, decodeAs } from './http.js';
import { authHeaders, DEV_TOKENS } from './testService.js';

const RosterChanges = t.type({
  results: t.array(
    t.intersection([
      t.type({ id: t.string, changes: t.array(t.type({ rev: t.string })) }),
      t.partial({ deleted: t.boolean }),
    ]),
  ),
});

export const servedRoster = async (url: string): Promise<Map<string, string | undefined>> => {
  const feed = await call(`${url}/api/v1/replication/roster/_changes`, {
    headers: authHeaders(DEV_TOKENS.DEV_CALLER_TOKEN),
  });
  return new Map(
    decodeAs(RosterChanges, feed.json)
      .results.filter((c) => c.deleted !== true)
      .map((c) => [c.id, c.changes[0]?.rev]),
  );
};
