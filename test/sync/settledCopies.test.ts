import { expect } from 'chai';
import { withdrawal } from '../../src/store/quorumWrites.js';
import type { Change } from '../../src/sync/changeFeed.js';
import { decodeEventChange } from '../../src/sync/eventPipeline.js';
import {
  type Leaf,
  type Leaves,
  settledPage,
  UNREADABLE,
  winningLeaf,
} from '../../src/sync/settledCopies.js';

const change = (id: string, seq: number, doc: object = { id, copy: 'feed' }): Change => ({
  id,
  seq,
  deleted: false,
  doc,
});
const leaf = (rev: string, copy: string, deleted = false): Leaf => ({
  rev,
  deleted,
  doc: { copy, _rev: rev },
});
const withdrawn = (rev: string): Leaf => ({ rev, deleted: true, doc: withdrawal('a', rev) });
const page = (...changes: Change[]) => ({ changes, lastSeq: changes.at(-1)?.seq ?? 0 });
const GRACE = 1000;

describe('settledPage: which copy of an event a pipeline on a cluster projects', () => {
  const cases: ReadonlyArray<{
    name: string;
    deletedInFeed?: boolean;
    leaves: ReadonlyArray<readonly [string, Leaves]>;
    unsettled?: ReadonlyArray<readonly [string, number]>;
    now?: number;
    kept: ReadonlyArray<readonly [string, string]>;
    lastSeq: number;
    withdraw: ReadonlyArray<readonly [string, string]>;
    waitingFor?: string;
    unreadable?: boolean;
  }> = [
    {
      name: 'one live leaf: that copy, whatever the feed showed',
      leaves: [
        ['a', [leaf('1-a', 'quorum')]],
        ['b', [leaf('1-b', 'b')]],
      ],
      kept: [
        ['a', 'quorum'],
        ['b', 'b'],
      ],
      lastSeq: 2,
      withdraw: [],
    },
    {
      name: 'a withdrawn leaf beside the live one is not a second copy',
      leaves: [['a', [leaf('2-x', 'withdrawn', true), leaf('1-a', 'kept')]]],
      kept: [
        ['a', 'kept'],
        ['b', 'as-fed'],
      ],
      lastSeq: 2,
      withdraw: [],
    },
    {
      name: 'no live leaf: the copy shown was withdrawn since, and nothing is projected for it',
      leaves: [
        ['a', [leaf('2-x', 'withdrawn', true)]],
        ['b', [leaf('1-b', 'b')]],
      ],
      kept: [
        ['a', 'superseded'],
        ['b', 'b'],
      ],
      lastSeq: 2,
      withdraw: [],
    },
    {
      name: 'a document the read has nothing for stays as the feed showed it',
      leaves: [['b', [leaf('1-b', 'b')]]],
      kept: [
        ['a', 'as-fed'],
        ['b', 'b'],
      ],
      lastSeq: 2,
      withdraw: [],
    },
    {
      name: 'a deletion in the feed while a copy stands elsewhere: that copy, as a live event',
      deletedInFeed: true,
      leaves: [
        ['a', [leaf('2-x', 'withdrawn', true), leaf('1-a', 'stands')]],
        ['b', [leaf('1-b', 'b')]],
      ],
      kept: [
        ['a', 'stands'],
        ['b', 'b'],
      ],
      lastSeq: 2,
      withdraw: [],
    },
    {
      name: 'a deletion in the feed with no live copy anywhere, not a withdrawal, stays a deletion',
      deletedInFeed: true,
      leaves: [
        ['a', [leaf('2-x', 'deleted by hand', true)]],
        ['b', [leaf('1-b', 'b')]],
      ],
      kept: [
        ['a', 'deleted'],
        ['b', 'b'],
      ],
      lastSeq: 2,
      withdraw: [],
    },
    {
      name: 'a deletion with only withdrawals as leaves: a write withdrawn, nothing to project or quarantine',
      deletedInFeed: true,
      leaves: [
        ['a', [withdrawn('2-x'), withdrawn('3-y')]],
        ['b', [leaf('1-b', 'b')]],
      ],
      kept: [
        ['a', 'superseded'],
        ['b', 'b'],
      ],
      lastSeq: 2,
      withdraw: [],
    },
    {
      name: 'a withdrawal beside a deletion that is not one stays a deletion',
      deletedInFeed: true,
      leaves: [['a', [withdrawn('2-x'), leaf('2-y', 'deleted by hand', true)]]],
      kept: [
        ['a', 'deleted'],
        ['b', 'as-fed'],
      ],
      lastSeq: 2,
      withdraw: [],
    },
    {
      name: 'two live copies, first seen now: the page stops before them and waits',
      leaves: [
        ['a', [leaf('1-a', 'a')]],
        ['b', [leaf('1-b1', 'one'), leaf('1-b2', 'two')]],
      ],
      kept: [['a', 'a']],
      lastSeq: 1,
      withdraw: [],
      waitingFor: 'b',
    },
    {
      name: 'two live copies as the first change: nothing is projected, the checkpoint stays',
      leaves: [['a', [leaf('1-a1', 'one'), leaf('1-a2', 'two')]]],
      kept: [],
      lastSeq: 0,
      withdraw: [],
      waitingFor: 'a',
    },
    {
      name: 'two live copies within the grace: still waiting',
      leaves: [['a', [leaf('1-a1', 'one'), leaf('1-a2', 'two')]]],
      unsettled: [['a', 5000]],
      now: 5000 + GRACE - 1,
      kept: [],
      lastSeq: 0,
      withdraw: [],
      waitingFor: 'a',
    },
    {
      name: 'leaves the cluster could not read (a node dying): the page stops before them, not "no live leaf"',
      leaves: [
        ['a', [leaf('1-a', 'a')]],
        ['b', UNREADABLE],
      ],
      kept: [['a', 'a']],
      lastSeq: 1,
      withdraw: [],
      waitingFor: 'b',
      unreadable: true,
    },
    {
      name: 'an unreadable deletion is not kept as a deletion either (it would be quarantined)',
      deletedInFeed: true,
      leaves: [['a', UNREADABLE]],
      kept: [],
      lastSeq: 0,
      withdraw: [],
      waitingFor: 'a',
      unreadable: true,
    },
    {
      name: 'unreadable past the grace of an unsettled document: still waiting, nothing withdrawn',
      leaves: [['a', UNREADABLE]],
      unsettled: [['a', 5000]],
      now: 5000 + GRACE * 10,
      kept: [],
      lastSeq: 0,
      withdraw: [],
      waitingFor: 'a',
      unreadable: true,
    },
    {
      name: "past the grace: CouchDB's winner is kept and the others withdrawn",
      leaves: [
        ['a', [leaf('1-a1', 'low'), leaf('1-a9', 'high'), leaf('1-a5', 'middle')]],
        ['b', [leaf('1-b', 'b')]],
      ],
      unsettled: [['a', 5000]],
      now: 5000 + GRACE,
      kept: [
        ['a', 'high'],
        ['b', 'b'],
      ],
      lastSeq: 2,
      withdraw: [
        ['a', '1-a1'],
        ['a', '1-a5'],
      ],
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const fed = page(
        c.deletedInFeed === true ? { id: 'a', seq: 1, deleted: true } : change('a', 1),
        change('b', 2),
      );
      const out = settledPage(
        c.name.includes('first change') || c.name.includes('within') ? page(change('a', 1)) : fed,
        new Map(c.leaves),
        0,
        new Map(c.unsettled ?? []),
        c.now ?? 5000,
        GRACE,
      );
      expect(
        out.page.changes.map((ch) => [
          ch.id,
          ch.superseded === true
            ? 'superseded'
            : ch.deleted
              ? 'deleted'
              : ch.doc === fed.changes.find((f) => f.id === ch.id)?.doc
                ? 'as-fed'
                : String(Reflect.get(Object(ch.doc), 'copy')),
        ]),
      ).to.deep.equal(c.kept);
      expect(out.page.lastSeq).to.equal(c.lastSeq);
      expect(out.withdraw.map((w) => [w.id, w.rev])).to.deep.equal(c.withdraw);
      expect(out.waitingFor).to.equal(c.waitingFor);
      expect(out.unreadable).to.equal(c.unreadable ?? false);
    });

  it('picks the winner as CouchDB does: the highest generation first, then the highest revision id', () => {
    expect(winningLeaf([leaf('2-aaa', 'two'), leaf('10-aaa', 'ten'), leaf('9-zzz', 'nine')])?.rev).to.equal(
      '10-aaa',
    );
    expect(winningLeaf([leaf('3-abc', 'x'), leaf('3-abd', 'y')])?.rev).to.equal('3-abd');
    expect(winningLeaf([])).to.equal(undefined);
  });

  it('a superseded change decodes to nothing to project', () => {
    expect(decodeEventChange({ id: 'event:x', seq: 3, deleted: false, superseded: true })).to.deep.equal({
      kind: 'skip',
      seq: 3,
    });
  });
});
