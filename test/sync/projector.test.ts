import { expect } from 'chai';
import type { AspectChange } from '../../src/domain/eventTypes.js';
import type { AspectEventRecord, AspectProjection } from '../../src/rules/projections.js';
import type { LoadedAspect, ProjectionStore, ProjectionWrite } from '../../src/store/projections.js';
import type { DecodedChange } from '../../src/sync/eventPipeline.js';
import { projectBatch } from '../../src/sync/projector.js';

const ASPECT = 'checkin:ses-1:stu-1';
const rec = (
  eventId: string,
  change: AspectChange,
  role: string,
  base: string | null,
  at: string,
): AspectEventRecord => ({
  eventId,
  baseVersion: base,
  subjectId: 'stu-1',
  userId: `user-${eventId}`,
  role,
  deviceId: `dev-${eventId}`,
  clientTimestamp: at,
  serverTimestamp: '2026-11-26T12:00:00.000Z',
  type: change.type,
  payload: {},
  change,
});
const e1 = rec(
  'e1',
  { type: 'CHECK_IN', checkInId: 'c1', sessionId: 'ses-1', visitor: false },
  'CHAMADOR',
  null,
  '2026-11-26T10:00:00.000Z',
);
const checkOut = (who: string) => ({
  type: 'CHECK_OUT' as const,
  checkInId: 'c1',
  sessionId: 'ses-1',
  pickupPerson: who,
});
const e2 = rec('e2', checkOut('Avó'), 'ADMIN', 'e1', '2026-11-26T11:00:00.000Z');
const e3 = rec('e3', checkOut('Tio'), 'CHAMADOR', 'e1', '2026-11-26T11:30:00.000Z');
const change = (r: AspectEventRecord): DecodedChange => ({
  kind: 'aspect',
  seq: 0,
  aspect: ASPECT,
  record: r,
});

/** A projections store whose aspect reads and commit answers are scripted, one per attempt. */
const scripted = (
  loads: ReadonlyArray<LoadedAspect | undefined>,
  answers: ReadonlyArray<'OK' | 'CONFLICT' | 'THROW'>,
) => {
  const commits: ProjectionWrite[] = [];
  let reads = 0;
  const unused = () => {
    throw new Error('not used by projectBatch');
  };
  const store: ProjectionStore = {
    async loadAspects() {
      const loaded = loads[Math.min(reads, loads.length - 1)];
      reads += 1;
      return new Map(loaded === undefined ? [] : [[ASPECT, loaded]]);
    },
    async commit(write) {
      commits.push(write);
      const answer = answers[commits.length - 1] ?? 'OK';
      if (answer === 'THROW') throw new Error('the store went away');
      return answer;
    },
    recordQuarantines: async () => [],
    project: unused,
    projectPrefix: unused,
    checkpoint: unused,
    saveCheckpoint: unused,
    eachAspectByDay: unused,
    conflicts: unused,
    recordAdmissionExceptions: unused,
    quarantined: unused,
    forkedAspects: unused,
    settleQuarantineForks: unused,
    reset: unused,
  };
  return { store, commits };
};

/**
 * A projector whose instances share the projections (so a retry audits again what it finds standing),
 * with the audit keys it wrote.
 */
const sharedProjections = (store: ProjectionStore) => {
  const audited: string[] = [];
  const project = (changes: Parameters<typeof projectBatch>[1]) =>
    projectBatch(
      {
        projections: store,
        audit: async (entries) => void audited.push(...entries.map((e) => e.key?.auditId ?? '')),
        othersCommit: true,
      },
      changes,
    );
  return { audited, project };
};

describe('projectBatch against a concurrent projector (another instance on one CouchDB)', () => {
  it('puts right the conflict records of an attempt that lost its aspect write', async () => {
    // The first attempt reads an aspect that holds e1. Its commit loses: another
    // projector stored e2 and e3 meanwhile, and this attempt's conflict record (written in the same
    // _bulk_docs) may have landed over theirs. The retry reads an aspect that holds every event.
    const { store, commits } = scripted(
      [
        { rev: '1-a', events: [e1] },
        { rev: '2-b', events: [e1, e2, e3] },
      ],
      ['CONFLICT', 'OK'],
    );
    const { audited, project } = sharedProjections(store);
    const out = await project([change(e2), change(e3)]);
    expect(commits).to.have.length(2);
    expect(commits[0]?.aspects.map((a) => a.rev)).to.deep.equal(['1-a']);
    expect(commits[0]?.conflicts.map((c) => c.loser.eventId)).to.deep.equal(['e3']);
    // Nothing of the aspect left to write, but its records are given again from the retry's
    // projection, for the store to put right what the lost attempt may have written.
    expect(commits[1]?.aspects).to.deep.equal([]);
    expect(commits[1]?.conflicts.map((c) => [c.loser.eventId, c.winner.eventId])).to.deep.equal([
      ['e3', 'e2'],
    ]);
    expect([...(commits[1]?.noConflict ?? [])].sort()).to.deep.equal(['e1', 'e2']);
    expect(out.aspectsWritten).to.equal(0);
    // The same decision, the same audit key: one entry however often it is written.
    expect(new Set(audited).size).to.equal(1);
  });

  it('removes a conflict record a lost attempt wrote when the retry finds no such conflict, and audits none', async () => {
    // The lost attempt saw e3 lose to e2; the retry reads an aspect where e3 was applied first and e2
    // never arrived there (a different history): e3 is no loser, its record must go. Audited before
    // the commit, the lost attempt's decision stayed in the log; after it, nothing is (and the retry,
    // finding the aspect holding e3, audits again only what stands there: nothing).
    const e3First = rec('e3', checkOut('Tio'), 'CHAMADOR', 'e1', '2026-11-26T11:30:00.000Z');
    const { store, commits } = scripted(
      [
        { rev: '1-a', events: [e1, e2] },
        { rev: '2-b', events: [e1, e3First] },
      ],
      ['CONFLICT', 'OK'],
    );
    const { audited, project } = sharedProjections(store);
    const out = await project([change(e3)]);
    expect(commits[0]?.conflicts.map((c) => c.loser.eventId)).to.deep.equal(['e3']);
    expect(commits[1]?.conflicts).to.deep.equal([]);
    expect([...(commits[1]?.noConflict ?? [])].sort()).to.deep.equal(['e1', 'e3']);
    expect(out.conflictsChanged).to.deep.equal([]);
    expect(audited).to.deep.equal([]);
  });

  it('does not write again a batch whose aspects already hold its events: no write-through, no aspect; its conflict records checked', async () => {
    const { store, commits } = scripted([{ rev: '2-b', events: [e1, e2, e3] }], []);
    let writeThroughs = 0;
    const out = await projectBatch(
      {
        projections: store,
        audit: async () => undefined,
        writeThrough: async () => {
          writeThroughs += 1;
        },
      },
      [change(e2), change(e3)],
    );
    expect(commits.map((c) => c.aspects)).to.deep.equal([[]]);
    expect(commits[0]?.conflicts.map((c) => [c.loser.eventId, c.winner.eventId])).to.deep.equal([
      ['e3', 'e2'],
    ]);
    expect(writeThroughs).to.equal(0);
    expect(out.aspectsWritten).to.equal(0);
    expect(out.conflictsChanged, 'a replay decides nothing new').to.deep.equal([]);
  });
  it('writes again the records a lost attempt wrote, from the copy that won, when the retry finds the aspect holding its events', async () => {
    // This attempt reads the aspect holding e1 only (another instance has committed e2 meanwhile) and
    // writes the record from e1 and e3: checked out by Tio. Its commit loses. The retry reads the
    // aspect holding e1, e2 and e3: nothing to commit, but the record must be what that copy says
    // (e2, the ADMIN's check-out, wins), not what the lost attempt left.
    const { store, commits } = scripted(
      [
        { rev: '1-a', events: [e1] },
        { rev: '2-b', events: [e1, e2, e3] },
      ],
      ['CONFLICT', 'OK'],
    );
    const written: Array<{ events: string[]; pickedUpBy: unknown }> = [];
    await projectBatch(
      {
        projections: store,
        audit: async () => undefined,
        writeThrough: async (p) => {
          const state = p.state?.kind === 'checkin' ? p.state : undefined;
          written.push({
            events: p.events.map((e) => e.eventId),
            pickedUpBy: state?.checkins[0]?.pickupPerson,
          });
        },
      },
      [change(e3)],
    );
    expect(commits).to.have.length(2);
    expect(commits[1]?.aspects, 'the retry commits no aspect').to.deep.equal([]);
    expect(written).to.deep.equal([
      { events: ['e1', 'e3'], pickedUpBy: 'Tio' },
      { events: ['e1', 'e2', 'e3'], pickedUpBy: 'Avó' },
    ]);
  });

  it('writes again, after a failed try, the records of aspects it finds holding the batch', async () => {
    // As above, but the first attempt's commit throws (the store went away) instead of losing: the
    // pipeline runs the page again as a new call, which cannot know what the failed one wrote.
    const run = async (afterFailure: boolean) => {
      const { store } = scripted(
        [
          { rev: '1-a', events: [e1] },
          { rev: '2-b', events: [e1, e2, e3] },
        ],
        ['THROW', 'OK'],
      );
      const written: unknown[] = [];
      const deps = {
        projections: store,
        audit: async () => undefined,
        writeThrough: async (p: AspectProjection) => {
          const state = p.state?.kind === 'checkin' ? p.state : undefined;
          written.push(state?.checkins[0]?.pickupPerson);
        },
      };
      const failed = await projectBatch(deps, [change(e3)]).then(
        () => 'projected',
        () => 'threw',
      );
      await projectBatch(deps, [change(e3)], { afterFailure });
      return { failed, written };
    };
    expect(await run(true)).to.deep.equal({ failed: 'threw', written: ['Tio', 'Avó'] });
    // Without the flag the second run finds the aspect holding e3 and leaves Tio's record as it is.
    expect(await run(false)).to.deep.equal({ failed: 'threw', written: ['Tio'] });
  });

  it('does not audit a decision again when only the stored copy of one of its events changed', async () => {
    // e3 lost to e2 and was audited. Its copy was then withdrawn (its writer heard 503) and the batch's
    // resend stored another, with a later server time: the same decision, a later `detectedAt`.
    const resent = { ...e3, serverTimestamp: '2026-11-26T12:00:07.000Z' };
    const { store, commits } = scripted([{ rev: '2-b', events: [e1, e2, e3] }], []);
    const audited: string[] = [];
    const out = await projectBatch(
      {
        projections: store,
        audit: async (entries) => void audited.push(...entries.map((e) => e.key?.auditId ?? '')),
      },
      [change(resent)],
    );
    // The aspect takes the copy that stands now, and the record follows it...
    expect(commits[0]?.aspects.map((a) => a.projection.events.find((e) => e.eventId === 'e3'))).to.deep.equal(
      [resent],
    );
    expect(commits[0]?.conflicts.map((c) => [c.loser.eventId, c.detectedAt])).to.deep.equal([
      ['e3', '2026-11-26T12:00:07.000Z'],
    ]);
    // ...but the decision is the one already in the log.
    expect(audited).to.deep.equal([]);
    expect(out.conflictsChanged).to.deep.equal([]);
  });
});
