/**
 * Printers and print jobs (0051): the service the routes call and the worker that sends the jobs,
 * stopped on the disposer stack before the store closes (it waits for the attempts under way, each
 * bounded in time).
 */
import type { Logger } from 'pino';
import type { Disposers } from '../lib/disposers.js';
import { type PrintAgentService, printAgentService } from '../printing/printAgentService.js';
import { type PrintService, type PrintSettingsOf, printService } from '../printing/printService.js';
import { printWorker } from '../printing/printWorker.js';
import type { CheckinStore } from '../store/checkins.js';
import type { ClassStore } from '../store/classes.js';
import { printAgentStore } from '../store/printAgents.js';
import { printerStore } from '../store/printers.js';
import { printJobStore } from '../store/printJobs.js';
import type { Store } from '../store/store.js';
import type { StudentStore } from '../store/students.js';

export interface PrintingWiring {
  readonly store: Store;
  readonly checkins: CheckinStore;
  readonly students: StudentStore;
  readonly classes: ClassStore;
  readonly settings: PrintSettingsOf;
  /** The family pass's text for a child (0049), drawn on the guardian's stub. */
  readonly passOf: (studentId: string) => Promise<string | undefined>;
  readonly clock: () => Date;
  readonly logger: Logger;
  readonly opened: Disposers;
  /** Derives print agents' secrets (0054); the same on every instance. */
  readonly agentTokenKey: Uint8Array;
}

export interface Printing {
  readonly service: PrintService;
  readonly agents: PrintAgentService;
}

export const wirePrinting = (w: PrintingWiring): Printing => {
  const printers = printerStore(w.store.db.private);
  const jobs = printJobStore(w.store.db.requests);
  const agentStore = printAgentStore(w.store.db.private);
  const wakeLater: { wake: (jobId: string) => void } = { wake: () => undefined };
  const service = printService({
    printers,
    jobs,
    agents: agentStore,
    checkins: w.checkins,
    students: w.students,
    classes: w.classes,
    settings: w.settings,
    passOf: w.passOf,
    clock: w.clock,
    wake: (jobId) => wakeLater.wake(jobId),
  });
  const worker = printWorker({
    jobs,
    printers,
    content: service,
    clock: w.clock,
    allowedHosts: w.settings.allowedHosts,
    onJobEnd: (job) =>
      job.status === 'failed'
        ? w.logger.warn(
            { jobId: job.jobId, printerId: job.printerId, attempts: job.attempts, code: job.error?.code },
            'a print job failed',
          )
        : w.logger.info(
            { jobId: job.jobId, printerId: job.printerId, attempts: job.attempts, format: job.sent?.format },
            'a print job printed',
          ),
    onError: (e, where) =>
      w.logger.warn(
        { errorName: e instanceof Error ? e.name : typeof e, where },
        'the print worker met an error',
      ),
  });
  const agents = printAgentService({
    agents: agentStore,
    printers,
    jobs,
    content: service,
    clock: w.clock,
    tokenKey: w.agentTokenKey,
  });
  wakeLater.wake = (jobId) => {
    worker.wake(jobId);
    agents.wake();
  };
  w.opened.add('print worker', () => worker.stop());
  return { service, agents };
};
