/** Reading and writing documents through their codecs, so nothing from the store is trusted undecoded. */
import * as E from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import type { Database } from './pouch.js';
import { isNotFound } from './storeErrors.js';

export class UndecodableDocument extends Error {
  constructor(readonly id: string) {
    super(`undecodable document ${id}`);
    this.name = 'UndecodableDocument';
  }
}

export const decodeDoc = <C extends t.Mixed>(codec: C, id: string, doc: unknown): t.TypeOf<C> => {
  const decoded = codec.decode(doc);
  if (E.isLeft(decoded)) throw new UndecodableDocument(id);
  return decoded.right;
};

export const getDoc = async <C extends t.Mixed>(
  db: Database,
  codec: C,
  id: string,
): Promise<t.TypeOf<C> | undefined> => {
  const doc: unknown = await db.get(id).catch((e: unknown) => {
    if (isNotFound(e)) return undefined;
    throw e;
  });
  return doc === undefined ? undefined : decodeDoc(codec, id, doc);
};

/** Every document of one `docType` (through the by-docType index), decoded. */
export const listDocs = async <C extends t.Mixed>(
  db: Database,
  codec: C,
  docType: string,
): Promise<Array<t.TypeOf<C>>> => {
  const found = await db.find({ selector: { docType }, limit: 100_000, use_index: 'idx-by-docType' });
  return found.docs.map((d) => decodeDoc(codec, d._id, d));
};

/** The documents among `ids` that exist, decoded, in one read; absent and deleted ids are left out. */
export const getDocs = async <C extends t.Mixed>(
  db: Database,
  codec: C,
  ids: ReadonlyArray<string>,
): Promise<Array<t.TypeOf<C>>> => {
  if (ids.length === 0) return [];
  const res = await db.allDocs({ keys: [...ids], include_docs: true });
  return res.rows.flatMap((row) =>
    'error' in row || row.doc === undefined || row.doc === null ? [] : [decodeDoc(codec, row.id, row.doc)],
  );
};
