/**
 * Printers and print jobs (issue #38 items 1 and 2, decision 0051). The routes call this; the worker
 * (`printWorker.ts`) sends the jobs. A request never waits on a printer: creating a job stores it and
 * wakes the worker, and the answer is 202 with the job's id.
 */
import * as E from 'fp-ts/lib/Either.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { ValidationIssue } from '../domain/issues.js';
import type { Actor } from '../domain/principal.js';
import type {
  CreatePrinterBody,
  CreatePrintJobBody,
  PatchPrinterBody,
  PrinterDoc,
  PrintJobDoc,
  PrintJobKind,
} from '../domain/printing.js';
import { requestScopedId } from '../lib/requestIds.js';
import { type LabelContent, type LabelledChild, labelsOf, labelTime, testLabelsOf } from '../rules/labels.js';
import { printerIssues } from '../rules/printers.js';
import type { CheckinStore } from '../store/checkins.js';
import type { ClassStore } from '../store/classes.js';
import type { PrintAgentStore } from '../store/printAgents.js';
import type { PrinterFields, PrinterStore } from '../store/printers.js';
import type { PrintJobStore } from '../store/printJobs.js';
import type { StudentStore } from '../store/students.js';

export interface PrintSettingsOf {
  readonly allowedHosts: ReadonlyArray<string>;
  readonly giveUpMs: number;
  readonly labelTimeZone: string;
}

export interface PrintServiceDeps {
  readonly printers: PrinterStore;
  readonly jobs: PrintJobStore;
  /** The print agents a printer may name (0054). */
  readonly agents: Pick<PrintAgentStore, 'get'>;
  readonly checkins: Pick<CheckinStore, 'get'>;
  readonly students: Pick<StudentStore, 'getMany'>;
  readonly classes: Pick<ClassStore, 'getClass' | 'getSession'>;
  readonly settings: PrintSettingsOf;
  readonly clock: () => Date;
  /**
   * The text of the family pass of a child's family (0049), for the guardian's stub; undefined for a
   * child without a family (no phone that gives one), or without this dependency.
   */
  readonly passOf?: (studentId: string) => Promise<string | undefined>;
  /** Tells the worker a job is waiting (it also finds jobs on its own, after a restart). */
  readonly wake: (jobId: string) => void;
}

export interface PrintService {
  listPrinters(): Promise<PrinterDoc[]>;
  getPrinter(printerId: string): Promise<E.Either<ApiError, PrinterDoc>>;
  createPrinter(actor: Actor, body: CreatePrinterBody): Promise<E.Either<ApiError, PrinterDoc>>;
  patchPrinter(printerId: string, body: PatchPrinterBody): Promise<E.Either<ApiError, PrinterDoc>>;
  removePrinter(printerId: string): Promise<E.Either<ApiError, PrinterDoc>>;
  /** Queues the printer's test label. */
  testPrinter(actor: Actor, printerId: string): Promise<E.Either<ApiError, PrintJobDoc>>;
  createJob(actor: Actor, body: CreatePrintJobBody): Promise<E.Either<ApiError, PrintJobDoc>>;
  getJob(jobId: string): Promise<E.Either<ApiError, PrintJobDoc>>;
  /** What a job prints, from the records as they are now; `undefined` when none of its check-ins exists. */
  contentOf(job: PrintJobDoc, printer: PrinterDoc): Promise<LabelContent[] | undefined>;
}

const invalid = (issues: ValidationIssue[]): ApiError =>
  apiError('VALIDATION_FAILED', 'The printer settings do not hold together.', { issues });

/** Compare-and-swap writes retried this many times before a 409. */
const CAS_TRIES = 3;

export const printService = (deps: PrintServiceDeps): PrintService => {
  const { printers, jobs, clock, settings } = deps;

  const newJob = async (
    actor: Actor,
    printerId: string,
    kind: PrintJobKind,
    checkInIds: ReadonlyArray<string>,
  ): Promise<PrintJobDoc> => {
    const now = clock();
    const at = now.toISOString();
    const jobId = requestScopedId(actor.requestKey, `print job ${kind}`);
    const created = await jobs.create({
      jobId,
      printerId,
      kind,
      checkInIds: [...checkInIds],
      status: 'queued',
      error: null,
      attempts: 0,
      createdAt: at,
      createdBy: actor.principal.userId,
      updatedAt: at,
      notBefore: at,
      giveUpAt: new Date(now.getTime() + settings.giveUpMs).toISOString(),
      claimedBy: null,
      leaseUntil: null,
      sent: null,
    });
    // A retry of the same keyed request meets its own job.
    const job = created === 'EXISTS' ? await jobs.get(jobId) : created;
    if (job === undefined) throw new Error(`print job ${jobId} vanished after its creation`);
    deps.wake(job.jobId);
    return job;
  };

  /** A printer may name an agent that exists and is not revoked. */
  const agentIssues = async (agentId: string | undefined): Promise<ValidationIssue[]> => {
    if (agentId === undefined) return [];
    const agent = await deps.agents.get(agentId);
    if (agent === undefined) return [{ path: 'body.agentId', message: 'no such print agent' }];
    if (agent.revokedAt !== null) return [{ path: 'body.agentId', message: 'the print agent was revoked' }];
    return [];
  };

  /** The pass of the first child of the job who has a family, as the kiosk's stub asks it. */
  const passOfFamily = async (studentIds: ReadonlyArray<string>): Promise<string | undefined> => {
    const { passOf } = deps;
    if (passOf === undefined) return undefined;
    for (const id of studentIds) {
      const pass = await passOf(id);
      if (pass !== undefined) return pass;
    }
    return undefined;
  };

  const getPrinter = async (printerId: string): Promise<E.Either<ApiError, PrinterDoc>> => {
    const found = await printers.get(printerId);
    return found === undefined ? E.left(apiError('NOT_FOUND', 'No such printer.')) : E.right(found);
  };

  return {
    listPrinters: () => printers.list(),
    getPrinter,
    async createPrinter(actor, body) {
      const issues = [...printerIssues(body, settings.allowedHosts), ...(await agentIssues(body.agentId))];
      if (issues.length > 0) return E.left(invalid(issues));
      const at = clock().toISOString();
      const printerId = requestScopedId(actor.requestKey, 'printer');
      const created = await printers.create({
        printerId,
        name: body.name,
        protocol: body.protocol,
        uri: body.uri,
        layout: body.layout,
        labelLanguage: body.labelLanguage ?? 'pt-BR',
        createdAt: at,
        updatedAt: at,
        ...(body.agentId === undefined ? {} : { agentId: body.agentId.toLowerCase() }),
      });
      if (created !== 'EXISTS') return E.right(created);
      return getPrinter(printerId);
    },
    async patchPrinter(printerId, body) {
      for (let i = 0; i < CAS_TRIES; i += 1) {
        const current = await printers.get(printerId);
        if (current === undefined) return E.left(apiError('NOT_FOUND', 'No such printer.'));
        const agentId =
          body.agentId === undefined ? current.agentId : (body.agentId?.toLowerCase() ?? undefined);
        const next: PrinterFields = {
          printerId,
          name: body.name ?? current.name,
          protocol: body.protocol ?? current.protocol,
          uri: body.uri ?? current.uri,
          layout: body.layout ?? current.layout,
          labelLanguage: body.labelLanguage ?? current.labelLanguage,
          createdAt: current.createdAt,
          updatedAt: clock().toISOString(),
          ...(agentId === undefined ? {} : { agentId }),
        };
        const issues = [
          ...printerIssues(next, settings.allowedHosts),
          // A new agent is checked; the one it had may since be revoked, and other changes stay possible.
          ...(body.agentId === undefined ? [] : await agentIssues(agentId)),
        ];
        if (issues.length > 0) return E.left(invalid(issues));
        const saved = await printers.update(current, next);
        if (saved !== 'CONFLICT') return E.right(saved);
      }
      return E.left(apiError('CONFLICT', 'The printer kept changing; try again.'));
    },
    async removePrinter(printerId) {
      for (let i = 0; i < CAS_TRIES; i += 1) {
        const current = await printers.get(printerId);
        if (current === undefined) return E.left(apiError('NOT_FOUND', 'No such printer.'));
        if ((await printers.remove(current)) === 'REMOVED') return E.right(current);
      }
      return E.left(apiError('CONFLICT', 'The printer kept changing; try again.'));
    },
    async testPrinter(actor, printerId) {
      const printer = await printers.get(printerId);
      if (printer === undefined) return E.left(apiError('NOT_FOUND', 'No such printer.'));
      return E.right(await newJob(actor, printerId, 'test', []));
    },
    async createJob(actor, body) {
      const issues: ValidationIssue[] = [];
      if ((await printers.get(body.printerId)) === undefined)
        issues.push({ path: 'body.printerId', message: 'no such printer' });
      const found = await Promise.all(body.checkInIds.map((id) => deps.checkins.get(id)));
      found.forEach((c, i) => {
        if (c === undefined) issues.push({ path: `body.checkInIds.${i}`, message: 'no such check-in' });
      });
      if (issues.length > 0)
        return E.left(apiError('VALIDATION_FAILED', 'The print job names what does not exist.', { issues }));
      return E.right(await newJob(actor, body.printerId, 'labels', body.checkInIds));
    },
    async getJob(jobId) {
      const job = await jobs.get(jobId);
      return job === undefined ? E.left(apiError('NOT_FOUND', 'No such print job.')) : E.right(job);
    },
    async contentOf(job, printer) {
      const lang = printer.labelLanguage;
      if (job.kind === 'test') return testLabelsOf(lang, labelTime(lang, clock(), settings.labelTimeZone));
      const checkins = (await Promise.all(job.checkInIds.map((id) => deps.checkins.get(id)))).flatMap((c) =>
        c === undefined ? [] : [c],
      );
      if (checkins.length === 0) return undefined;
      const students = await deps.students.getMany(checkins.map((c) => c.studentId));
      const children: LabelledChild[] = [];
      for (const c of checkins) {
        const student = students.get(c.studentId);
        if (student === undefined) continue;
        const session = await deps.classes.getSession(c.sessionId);
        const klass = await deps.classes.getClass(session?.classId ?? student.classId);
        children.push({
          displayName: student.displayName,
          className: klass?.name ?? '',
          sessionTitle: session?.title ?? null,
          allergies: student.allergies,
          specialNeeds: student.specialNeeds,
          code: c.code,
        });
      }
      if (children.length === 0) return undefined;
      const first = checkins[0]?.checkedInAt ?? job.createdAt;
      return labelsOf(
        children,
        labelTime(lang, new Date(first), settings.labelTimeZone),
        lang,
        await passOfFamily(checkins.map((c) => c.studentId)),
      );
    },
  };
};
