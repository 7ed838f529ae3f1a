/**
 * The store's writes that may lose a race (`docWrites.ts`), on each backend: a create under a taken
 * id and a compare-and-swap on a stale revision answer the caller's word for it and leave the stored
 * document alone; a removal of a revision the store does not hold is a conflict; a claim is taken,
 * kept, or taken over only from a holder that no longer stands; a write that lost its race is tried
 * again on a fresh read; any other failure is thrown.
 */
import { expect } from 'chai';
import * as t from 'io-ts';
import {
  conflictAs,
  createOnce,
  putDoc,
  removeDoc,
  retryOnConflict,
  stayedContended,
  takeClaim,
} from '../../src/store/docWrites.js';
import type { Database } from '../../src/store/pouch.js';
import { withQuorumWrites } from '../../src/store/quorumWrites.js';
import { StoreTimeoutError } from '../../src/store/storeErrors.js';
import { databasePerTest, storeBackends } from '../support/storeBackends.js';

const ID = 'note:1';

/** A claim whose `text` names its holder; `gone` is a holder that no longer stands. */
const Claim = t.type({ _id: t.string, _rev: t.string, text: t.string });
const claimAs = (db: Database, holder: string) =>
  takeClaim(
    db,
    Claim,
    { _id: ID, text: holder },
    (held) => held.text === holder,
    async (held) => held.text === 'gone',
  );

/** A note stored twice, so its first revision is stale; answers both revisions. */
const storedTwice = async (db: Database): Promise<{ readonly first: string; readonly current: string }> => {
  const first = (await db.put({ _id: ID, text: 'first' })).rev;
  const current = (await db.put({ _id: ID, _rev: first, text: 'second' })).rev;
  return { first, current };
};

/** A read and a write on what it read; before the `interfered` first tries write, another writer does. */
const contendedWrite =
  (db: Database, interfered: number) =>
  async (tried: number): Promise<string> => {
    const current = await db.get(ID);
    if (tried < interfered) await db.put({ ...current, text: `another's ${tried + 1}` });
    await db.put({ ...current, text: `mine on try ${tried + 1}` });
    return 'LANDED';
  };

/** What a call answered, as a word: a written document, the caller's answer, or what it threw. */
const outcomeOf = async (call: Promise<unknown>): Promise<string> => {
  try {
    const r = await call;
    if (typeof r === 'string') return r;
    if (typeof r === 'boolean') return r ? 'CLAIMED' : 'NOT CLAIMED';
    return typeof r === 'object' && r !== null && '_rev' in r && typeof r._rev === 'string'
      ? 'WRITTEN'
      : 'OTHER';
  } catch (e) {
    // PouchDB's errors carry the HTTP-like status they were answered with; ours, a name.
    const status = typeof e === 'object' && e !== null && 'status' in e ? String(e.status) : undefined;
    return `THROWN ${status ?? (e instanceof Error ? e.name : 'other')}`;
  }
};

/** The note's text as stored afterwards, or `absent`. */
const storedText = async (db: Database): Promise<string> => {
  const doc = await db.get(ID).catch(() => undefined);
  return doc !== undefined && 'text' in doc && typeof doc.text === 'string' ? doc.text : 'absent';
};

interface Row {
  readonly case: string;
  readonly run: (db: Database) => Promise<unknown>;
  readonly answers: string;
  /** Absent where either outcome of a race is right (the row checks what matters itself). */
  readonly leaves?: string;
}

const rows: ReadonlyArray<Row> = [
  {
    case: 'a create under a free id writes the document',
    run: (db) => putDoc(db, { _id: ID, text: 'new' }, 'EXISTS'),
    answers: 'WRITTEN',
    leaves: 'new',
  },
  {
    case: 'a create under a taken id answers the caller’s word and leaves the first',
    run: async (db) => {
      await db.put({ _id: ID, text: 'first' });
      return putDoc(db, { _id: ID, text: 'retry' }, 'EXISTS');
    },
    answers: 'EXISTS',
    leaves: 'first',
  },
  {
    case: 'a compare-and-swap on the current revision writes',
    run: async (db) => {
      const { current } = await storedTwice(db);
      return putDoc(db, { _id: ID, _rev: current, text: 'third' }, 'CONFLICT');
    },
    answers: 'WRITTEN',
    leaves: 'third',
  },
  {
    case: 'a compare-and-swap on a stale revision answers the caller’s word and leaves the newer',
    run: async (db) => {
      const { first } = await storedTwice(db);
      return putDoc(db, { _id: ID, _rev: first, text: 'late' }, 'CONFLICT');
    },
    answers: 'CONFLICT',
    leaves: 'second',
  },
  {
    case: 'a write the store refuses for another reason is thrown, not taken for a lost race',
    run: (db) => putDoc(db, { _id: '_not-reserved', text: 'bad' }, 'EXISTS'),
    answers: 'THROWN 400',
    leaves: 'absent',
  },
  {
    case: 'a removal of the current revision removes',
    run: async (db) => {
      const { current } = await storedTwice(db);
      return removeDoc(db, { _id: ID, _rev: current });
    },
    answers: 'REMOVED',
    leaves: 'absent',
  },
  {
    case: 'a removal of a stale revision answers CONFLICT and leaves the newer',
    run: async (db) => {
      const { first } = await storedTwice(db);
      return removeDoc(db, { _id: ID, _rev: first });
    },
    answers: 'CONFLICT',
    leaves: 'second',
  },
  {
    case: 'a removal retried after the first took effect meets the deletion: CONFLICT',
    run: async (db) => {
      const { current } = await storedTwice(db);
      await removeDoc(db, { _id: ID, _rev: current });
      return removeDoc(db, { _id: ID, _rev: current });
    },
    answers: 'CONFLICT',
    leaves: 'absent',
  },
  {
    case: 'a removal of a document the store has never held is a conflict too',
    run: (db) => removeDoc(db, { _id: ID, _rev: '1-00000000000000000000000000000000' }),
    answers: 'CONFLICT',
    leaves: 'absent',
  },
  {
    case: 'a claim nobody holds is taken',
    run: (db) => claimAs(db, 'me'),
    answers: 'CLAIMED',
    leaves: 'me',
  },
  {
    case: 'a claim the caller holds already is kept',
    run: async (db) => {
      await db.put({ _id: ID, text: 'me' });
      return claimAs(db, 'me');
    },
    answers: 'CLAIMED',
    leaves: 'me',
  },
  {
    case: 'a claim another holder who stands holds is refused and left to them',
    run: async (db) => {
      await db.put({ _id: ID, text: 'other' });
      return claimAs(db, 'me');
    },
    answers: 'NOT CLAIMED',
    leaves: 'other',
  },
  {
    case: 'a claim whose holder no longer stands is taken over',
    run: async (db) => {
      await db.put({ _id: ID, text: 'gone' });
      return claimAs(db, 'me');
    },
    answers: 'CLAIMED',
    leaves: 'me',
  },
  {
    case: 'a stale claim taken over by another first is refused',
    run: async (db) => {
      await db.put({ _id: ID, text: 'gone' });
      // The other instance takes it over between this one's read and its compare-and-swap.
      return takeClaim(
        db,
        Claim,
        { _id: ID, text: 'me' },
        (held) => held.text === 'me',
        async (held) => {
          await db.put({ _id: ID, _rev: held._rev, text: 'other' });
          return true;
        },
      );
    },
    answers: 'NOT CLAIMED',
    leaves: 'other',
  },
  {
    case: 'a write that lost its race is tried again on a fresh read, and lands',
    run: async (db) => {
      await db.put({ _id: ID, text: 'first' });
      return retryOnConflict(3, contendedWrite(db, 1), () => 'CONTENDED');
    },
    answers: 'LANDED',
    leaves: 'mine on try 2',
  },
  {
    case: 'a write that lost every try answers what contended says',
    run: async (db) => {
      await db.put({ _id: ID, text: 'first' });
      return retryOnConflict(3, contendedWrite(db, 3), () => 'CONTENDED');
    },
    answers: 'CONTENDED',
    leaves: "another's 3",
  },
  {
    case: 'a write that must land throws once every try lost',
    run: async (db) => {
      await db.put({ _id: ID, text: 'first' });
      return retryOnConflict(2, contendedWrite(db, 2), stayedContended('the note'));
    },
    answers: 'THROWN Error',
    leaves: "another's 2",
  },
  {
    case: 'a failure other than a conflict is thrown at once, not tried again',
    run: (db) =>
      retryOnConflict(
        3,
        async (tried) => {
          // A second try would meet this note and lose its race, never throw.
          await db.put({ _id: ID, text: `tried ${tried + 1} time(s)` });
          throw new StoreTimeoutError(1000);
        },
        () => 'CONTENDED',
      ),
    answers: 'THROWN StoreTimeoutError',
    leaves: 'tried 1 time(s)',
  },
  {
    case: 'a document made once is created when there is none, and answered',
    run: async (db) => (await createOnce(db, Claim, ID, () => ({ text: 'made' }))).text,
    answers: 'made',
    leaves: 'made',
  },
  {
    case: 'a document made once that stands already is answered as it is',
    run: async (db) => {
      await db.put({ _id: ID, text: 'first' });
      return (await createOnce(db, Claim, ID, () => ({ text: 'second' }))).text;
    },
    answers: 'first',
    leaves: 'first',
  },
  {
    case: 'two instances making one document at once both answer the one that stands',
    run: async (db) => {
      const [a, b] = await Promise.all([
        createOnce(db, Claim, ID, () => ({ text: 'a' })),
        createOnce(db, Claim, ID, () => ({ text: 'b' })),
      ]);
      const stands = await storedText(db);
      return a.text === stands && b.text === stands ? 'BOTH ANSWER IT' : `${a.text} / ${b.text} / ${stands}`;
    },
    answers: 'BOTH ANSWER IT',
  },
  {
    case: 'conflictAs answers the write’s own value when it succeeds',
    run: async (db) =>
      conflictAs('CONFLICT', async () => (await db.put({ _id: ID, text: 'plain' })).ok && 'OK'),
    answers: 'OK',
    leaves: 'plain',
  },
  {
    case: 'conflictAs throws a failure that is not a conflict (the store gone silent)',
    run: () =>
      conflictAs('CONFLICT', () => {
        throw new StoreTimeoutError(1000);
      }),
    answers: 'THROWN StoreTimeoutError',
    leaves: 'absent',
  },
];

for (const [name, host] of storeBackends('doc-writes')) {
  describe(`writes that may lose a race on ${name}`, () => {
    const per = databasePerTest(host, 'doc-writes');
    for (const row of rows)
      it(row.case, async () => {
        const db = withQuorumWrites(per.db());
        expect(await outcomeOf(row.run(db))).to.equal(row.answers);
        if (row.leaves !== undefined) expect(await storedText(db)).to.equal(row.leaves);
      });
  });
}
