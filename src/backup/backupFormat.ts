/**
 * A backup file: newline-delimited JSON, one line per record, optionally gzipped (decision 0022).
 *
 *   {"kind":"header","format":"chamada-backup","version":1,"createdAt":…,"backend":…,"databases":[…]}
 *   {"kind":"begin","database":"audit","updateSeq":…,"docCount":…}    per database, in the header's order
 *   {"kind":"docs","database":"audit","docs":[…]}                     a page of documents (bulkGet's shape)
 *   {"kind":"end","database":"audit","documents":N}
 *   {"kind":"complete","documents":{"audit":N,…}}                     last: a file without it is incomplete
 *
 * Documents keep `_id`, `_rev` and `_revisions`, so they are stored back under the same revisions
 * (`bulkDocs` with `new_edits: false`), as PouchDB's replicator and couchbackup's restore do.
 */
import * as t from 'io-ts';
import type { DatabaseName } from '../store/store.js';
import { StoredDoc } from '../store/wholeDatabases.js';

export const BACKUP_FORMAT = 'chamada-backup';
export const BACKUP_VERSION = 1;

const DatabaseNameC = t.keyof({
  roster: null,
  events: null,
  private: null,
  requests: null,
  audit: null,
  projections: null,
} satisfies Record<DatabaseName, null>);

const Header = t.type({
  kind: t.literal('header'),
  format: t.literal(BACKUP_FORMAT),
  version: t.literal(BACKUP_VERSION),
  createdAt: t.string,
  backend: t.keyof({ embedded: null, couchdb: null }),
  databases: t.array(DatabaseNameC),
});
const Begin = t.type({
  kind: t.literal('begin'),
  database: DatabaseNameC,
  // CouchDB's sequences are opaque strings, PouchDB's numbers; recorded for the operator, not used.
  updateSeq: t.union([t.string, t.number]),
  docCount: t.number,
});
const Docs = t.type({ kind: t.literal('docs'), database: DatabaseNameC, docs: t.array(StoredDoc) });
const End = t.type({ kind: t.literal('end'), database: DatabaseNameC, documents: t.number });
const Complete = t.type({ kind: t.literal('complete'), documents: t.record(t.string, t.number) });

export const BackupLine = t.union([Header, Begin, Docs, End, Complete]);
export type BackupLine = t.TypeOf<typeof BackupLine>;
export type BackupHeader = t.TypeOf<typeof Header>;
