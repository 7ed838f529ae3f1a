import { expect } from 'chai';
import { type Observable, of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { Change } from '../../src/sync/changeFeed.js';
import {
  type BatchOutcome,
  type DecodedChange,
  decodeEventChange,
  eventPipeline$,
  type Page,
  type Seq,
} from '../../src/sync/eventPipeline.js';

const newScheduler = () =>
  new TestScheduler((actual, expected) => {
    expect(actual).to.deep.equal(expected);
  });

const STUDENT = '0b0c8c3e-6a55-4d3c-9f3e-1d2f3a4b5c6d';

/** A stored attendance event as the events database would hand it over. */
const eventDoc = (eventId: string) => ({
  _id: `event:${eventId}`,
  _rev: '1-x',
  docType: 'event',
  eventId,
  type: 'MARK_PRESENT',
  subjectType: 'STUDENT',
  subjectId: STUDENT,
  aspect: `attendance:${STUDENT}:2026-11-26`,
  baseVersion: null,
  payload: { actionType: 'MARK_PRESENT' },
  actor: { userId: 'u1', role: 'CHAMADOR' },
  deviceId: null,
  clientTimestamp: '2026-11-26T10:00:00.000Z',
  serverTimestamp: '2026-11-26T10:00:01.000Z',
});

const change = (seq: number, doc: unknown, id = `event:e${seq}`): Change => ({
  id,
  seq,
  deleted: false,
  doc,
});

/** A store of changes the pipeline pulls from: pages of `limit` after `since`. */
const feed =
  (changes: ReadonlyArray<Change>) =>
  (since: Seq, limit: number): Page => {
    const after = changes.filter((c) => Number(c.seq) > Number(since)).slice(0, limit);
    return { changes: after, lastSeq: after[after.length - 1]?.seq ?? since };
  };

describe('event pipeline decode', () => {
  it('decodes an aspect event, skips record-keeping events and design documents', () => {
    const decoded = decodeEventChange(change(1, eventDoc('e1')));
    expect(decoded.kind).to.equal('aspect');
    if (decoded.kind === 'aspect') {
      expect(decoded.aspect).to.equal(`attendance:${STUDENT}:2026-11-26`);
      expect(decoded.record.change).to.deep.equal({ type: 'MARK_PRESENT', sessionId: null });
    }
    const { aspect: _a, baseVersion: _b, ...recordOnly } = eventDoc('e2');
    expect(decodeEventChange(change(2, recordOnly)).kind).to.equal('skip');
    expect(decodeEventChange(change(3, {}, '_design/immutable')).kind).to.equal('skip');
  });

  it("decodes a visitor's registration as an aspect change of its own kind, and quarantines one without a phone", () => {
    const payload = { displayName: 'Helena', guardianName: 'Rita', phone: '11 91234-5678', classId: 'c1' };
    const doc = { ...eventDoc('v1'), type: 'VISITOR_REGISTERED', aspect: `visitor:${STUDENT}`, payload };
    const decoded = decodeEventChange(change(1, doc, 'event:v1'));
    expect(decoded.kind === 'aspect' ? decoded.record.change : undefined).to.deep.equal({
      type: 'VISITOR_REGISTERED',
      ...payload,
      allergies: null,
      specialNeeds: null,
    });
    const { phone: _p, ...noPhone } = payload;
    expect(decodeEventChange(change(2, { ...doc, payload: noPhone }, 'event:v1'))).to.deep.include({
      kind: 'quarantine',
      reason: 'UNDECODABLE_PAYLOAD',
    });
  });

  it('quarantines what it cannot read, with the reason, and never throws', () => {
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [{ nonsense: true }, 'UNDECODABLE_EVENT'],
      [null, 'UNDECODABLE_EVENT'],
      [{ ...eventDoc('e1'), aspect: 'weather:today' }, 'UNKNOWN_ASPECT'],
      [{ ...eventDoc('e1'), payload: { actionType: 'MARK_ABSENT' } }, 'UNDECODABLE_PAYLOAD'],
      [{ ...eventDoc('e1'), type: 'TELEPORT' }, 'UNDECODABLE_PAYLOAD'],
    ];
    for (const [doc, reason] of cases) {
      expect(decodeEventChange(change(1, doc))).to.deep.equal({
        kind: 'quarantine',
        seq: 1,
        docId: 'event:e1',
        reason,
      });
    }
    expect(decodeEventChange({ id: 'event:x', seq: 9, deleted: true })).to.deep.include({
      reason: 'DELETED',
    });
  });

  it("reports an event at a revision the service's own writes do not leave, aspect or not (decision 0063)", () => {
    const { aspect: _a, baseVersion: _b, ...recordOnly } = eventDoc('e1');
    const anonymised = { ...eventDoc('e1'), anonymisedAt: '2026-11-27T00:00:00.000Z' };
    const cases: ReadonlyArray<readonly [string, string, object, string]> = [
      ['written once', '1-a', eventDoc('e1'), 'aspect'],
      ['changed once', '2-a', eventDoc('e1'), 'REWRITTEN'],
      ['stored again over its withdrawal', '3-a', eventDoc('e1'), 'aspect'],
      ['changed after that', '4-a', eventDoc('e1'), 'REWRITTEN'],
      ['anonymised', '2-a', anonymised, 'aspect'],
      ['changed after its anonymisation', '3-a', anonymised, 'REWRITTEN'],
      ['marked anonymised at its first write', '1-a', anonymised, 'REWRITTEN'],
      ['a record-keeping event changed', '2-a', recordOnly, 'REWRITTEN'],
      ['a record-keeping event written once', '1-a', recordOnly, 'skip'],
      ['a revision that is not one', 'nonsense', eventDoc('e1'), 'REWRITTEN'],
      ['under an id not its own', '1-a', eventDoc('e2'), 'MISNAMED_EVENT'],
    ];
    for (const [what, rev, doc, expected] of cases) {
      const decoded = decodeEventChange(change(1, { ...doc, _rev: rev }));
      expect(decoded.kind === 'quarantine' ? decoded.reason : decoded.kind, what).to.equal(expected);
    }
    // The feed's revision when the document carries none.
    expect(decodeEventChange({ ...change(1, eventDoc('e1')), rev: '2-b' }).kind).to.equal('aspect');
    const { _rev: _r, ...bare } = eventDoc('e1');
    expect(decodeEventChange({ ...change(1, bare), rev: '2-b' })).to.deep.include({ reason: 'REWRITTEN' });
  });
});

describe('event pipeline streams (marbles)', () => {
  const run = (
    changes: ReadonlyArray<Change>,
    options: {
      wake: string;
      process?: (
        batch: ReadonlyArray<DecodedChange>,
        call: number,
        cold: (marbles: string, values?: undefined, error?: unknown) => Observable<unknown>,
      ) => Observable<unknown>;
      pageSize?: number;
      since?: Seq;
    },
    check: (
      out: Observable<BatchOutcome>,
      helpers: { processed: DecodedChange[][]; checkpoints: Seq[]; errors: unknown[] },
      expect$: (o: Observable<unknown>) => { toBe(m: string, v?: Record<string, unknown>): void },
      flush: () => void,
    ) => void,
  ) =>
    newScheduler().run(({ hot, cold, expectObservable, flush }) => {
      const processed: DecodedChange[][] = [];
      const checkpoints: Seq[] = [];
      const errors: unknown[] = [];
      let calls = 0;
      const pull = feed(changes);
      const out = eventPipeline$({
        wake$: hot(options.wake),
        pull: (since, limit) => of(pull(since, limit)),
        process: (batch) => {
          calls += 1;
          processed.push([...batch]);
          return options.process === undefined ? of(true) : options.process(batch, calls, cold);
        },
        saveCheckpoint: (seq) => {
          checkpoints.push(seq);
          return of(undefined);
        },
        since: options.since ?? 0,
        pageSize: options.pageSize ?? 2,
        retryDelayMs: 5,
        onError: (e) => errors.push(e),
      });
      check(out, { processed, checkpoints, errors }, expectObservable, flush);
    });

  it('pulls page after page from the checkpoint, saving the checkpoint after each page', () => {
    const changes = [1, 2, 3, 4, 5].map((n) => change(n, eventDoc(`e${n}`)));
    run(changes, { wake: 'w' }, (out, h, expect$, flush) => {
      expect$(out).toBe('(abc)', {
        a: { events: [ev('e1'), ev('e2')], quarantined: [], lastSeq: 2 },
        b: { events: [ev('e3'), ev('e4')], quarantined: [], lastSeq: 4 },
        c: { events: [ev('e5')], quarantined: [], lastSeq: 5 },
      });
      flush();
      expect(h.checkpoints).to.deep.equal([2, 4, 5]);
      expect(h.processed.map((b) => b.length)).to.deep.equal([2, 2, 1]);
    });
  });

  it('resumes after the checkpoint it started from, never replaying what it covers', () => {
    const changes = [1, 2, 3].map((n) => change(n, eventDoc(`e${n}`)));
    run(changes, { wake: 'w', since: 2 }, (out, h, expect$, flush) => {
      expect$(out).toBe('a', { a: { events: [ev('e3')], quarantined: [], lastSeq: 3 } });
      flush();
      expect(h.checkpoints).to.deep.equal([3]);
    });
  });

  it('passes a poisoned document on as a quarantine item and keeps following the feed', () => {
    const changes = [
      change(1, eventDoc('e1')),
      change(2, { poison: '💀' }, 'event:bad'),
      change(3, eventDoc('e3')),
    ];
    run(changes, { wake: 'w', pageSize: 10 }, (out, h, expect$, flush) => {
      expect$(out).toBe('a', {
        a: { events: [ev('e1'), ev('e3')], quarantined: ['event:bad'], lastSeq: 3 },
      });
      flush();
      expect(h.processed[0]?.map((d) => d.kind)).to.deep.equal(['aspect', 'quarantine', 'aspect']);
      expect(h.checkpoints).to.deep.equal([3]);
    });
  });

  it('retries a failed batch after the delay from the same checkpoint, then goes on', () => {
    {
      const changes = [1, 2, 3].map((n) => change(n, eventDoc(`e${n}`)));
      run(
        changes,
        {
          wake: 'w',
          // The first attempt at the second page fails after 2 frames.
          process: (_batch, call, cold) =>
            call === 2 ? cold('--#', undefined, new Error('store down')) : of(true),
        },
        (out, h, expect$, flush) => {
          // Page 1 at 0; page 2 fails at 2, is retried 5 frames later (7) and succeeds.
          expect$(out).toBe('a------b', {
            a: { events: [ev('e1'), ev('e2')], quarantined: [], lastSeq: 2 },
            b: { events: [ev('e3')], quarantined: [], lastSeq: 3 },
          });
          flush();
          expect(h.checkpoints).to.deep.equal([2, 3]);
          expect(h.errors).to.have.length(1);
          expect(
            h.processed.map((b) => b.map((d) => (d.kind === 'aspect' ? d.record.eventId : d.kind))),
          ).to.deep.equal([['e1', 'e2'], ['e3'], ['e3']]);
        },
      );
    }
  });

  it('does nothing for a wake with no new changes, and drains again on the next wake', () => {
    const changes = [change(1, eventDoc('e1'))];
    run(changes, { wake: 'w-w' }, (out, h, expect$, flush) => {
      expect$(out).toBe('a', { a: { events: [ev('e1')], quarantined: [], lastSeq: 1 } });
      flush();
      expect(h.processed).to.have.length(1);
      expect(h.checkpoints).to.deep.equal([1]);
    });
  });
});

function ev(eventId: string) {
  return { eventId, aspect: `attendance:${STUDENT}:2026-11-26` };
}
