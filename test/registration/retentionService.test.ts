/**
 * A retention run stopped by the service's stop (decision 0045): it waits for the pipeline to have
 * projected everything, and a stop must not wait for that (the pipeline stops after the job).
 */
import { expect } from 'chai';
import {
  type RetentionDeps,
  RetentionStopped,
  retentionService,
} from '../../src/registration/retentionService.js';

const unused = (): never => {
  throw new Error('not reached before the pipeline has caught up');
};

const waitingForThePipeline = (): RetentionDeps => ({
  config: { get: unused, save: unused },
  students: {
    get: unused,
    getMany: unused,
    listAll: unused,
    eachPage: unused,
    create: unused,
    createMany: unused,
    update: unused,
    applyField: unused,
  },
  directory: { upsertStudent: unused },
  photos: { remove: unused, studentsWithPhotos: unused },
  events: { anonymise: unused, retire: unused },
  subjects: { eventsOf: unused, checkinsOf: unused },
  consents: { listForSubject: unused, anonymise: unused },
  pickups: { removeOfStudent: unused },
  checkins: { anonymiseRecords: unused, removeRecords: unused },
  pages: { listAll: unused, ofStudent: unused, remove: unused },
  projections: {
    eachAspectByDay: unused,
    retireAspects: unused,
    anonymiseAspects: unused,
    removeAdmissionExceptions: unused,
  },
  audit: { eachBefore: unused, anonymise: unused, markDone: unused },
  idempotency: { purgeExpired: unused },
  // A replay that does not end while the test runs.
  pipeline: { catchUp: () => new Promise<void>(() => undefined) },
  clock: () => new Date(),
  nextRunAt: (now) => now,
});

describe('a retention run and the stop', () => {
  it('stops while it waits for the pipeline, as soon as it is told, having changed nothing', async () => {
    const stop = new AbortController();
    const run = retentionService(waitingForThePipeline()).run(stop.signal);
    setTimeout(() => stop.abort(), 20);
    const outcome = await run.then(
      () => 'ended',
      (e: unknown) => e,
    );
    expect(outcome).to.be.instanceOf(RetentionStopped);
  });

  it('does not start when told to stop before it begins', async () => {
    const stop = new AbortController();
    stop.abort();
    const outcome = await retentionService(waitingForThePipeline())
      .run(stop.signal)
      .then(
        () => 'ended',
        (e: unknown) => e,
      );
    expect(outcome).to.be.instanceOf(RetentionStopped);
  });
});
