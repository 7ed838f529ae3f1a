/**
 * Printers (ADMIN) and print jobs (those who check children in), decision 0051. A print job is
 * accepted with 202 and sent by the worker: no request waits on a printer.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { object, Uuid } from '../../domain/codec.js';
import type { Principal } from '../../domain/principal.js';
import {
  CreatePrinterBody,
  CreatePrintJobBody,
  PatchPrinterBody,
  Printer,
  type PrinterDoc,
  PrinterIdParams,
  PrinterList,
  PrintJob,
  PrintJobAccepted,
  type PrintJobDoc,
  PrintJobIdParams,
  toDoorPrinter,
  toPrinter,
  toPrintJob,
} from '../../domain/printing.js';
import { mayReach } from '../../rules/authorization.js';
import { actorOf } from '../actor.js';
import { defineRoute } from '../route.js';

const HOSTS =
  'An unknown `protocol`, a `uri` that is not `ipp://`, `ipps://` or `tcp://` (or not the one its protocol speaks), ' +
  'and a host `PRINTER_HOSTS` does not list (when it is set) are 400 `VALIDATION_FAILED`, each issue at `body.uri`.';

const PrinterDeleted = object(
  'PrinterDeleted',
  { printerId: Uuid, deleted: t.literal(true) },
  {},
  { description: 'The printer is gone; its queued jobs fail with `PRINTER_REMOVED`.' },
);

/**
 * The door reads printers to pick its own (each tablet keeps its choice, item 4 of #38); the URI, an
 * address on the church's network, stays with those who set printers up.
 */
const printerFor = (principal: Principal | null): ((p: PrinterDoc) => Printer) =>
  principal !== null && mayReach('admin', principal) ? toPrinter : toDoorPrinter;

const WHO_READS =
  'Those who check children in read printers to choose one for their tablet; only an ADMIN is given `uri`.';

export const listPrintersRoute = defineRoute({
  operationId: 'listPrinters',
  method: 'get',
  path: '/api/v1/printers',
  auth: 'chamador',
  permission: 'attendance',
  summary: 'Every printer, ordered by name',
  description: `A church has a few; the list is not paged. ${WHO_READS}`,
  tags: ['printing'],
  response: { status: 200, description: 'The printers.', codec: PrinterList },
  handler: async ({ deps, principal }) =>
    E.right({ body: { items: (await deps.printing.listPrinters()).map(printerFor(principal)) } }),
});

export const getPrinterRoute = defineRoute({
  operationId: 'getPrinter',
  method: 'get',
  path: '/api/v1/printers/{printerId}',
  auth: 'chamador',
  permission: 'attendance',
  summary: 'One printer',
  description: WHO_READS,
  tags: ['printing'],
  params: PrinterIdParams,
  response: { status: 200, description: 'The printer.', codec: Printer },
  errors: ['NOT_FOUND'],
  handler: async ({ params, deps, principal }) =>
    E.map((p: PrinterDoc) => ({ body: printerFor(principal)(p) }))(
      await deps.printing.getPrinter(params.printerId),
    ),
});

export const createPrinterRoute = defineRoute({
  operationId: 'createPrinter',
  method: 'post',
  path: '/api/v1/printers',
  auth: 'admin',
  summary: 'Set up a label printer',
  description: HOSTS,
  tags: ['printing'],
  body: CreatePrinterBody,
  response: {
    status: 201,
    description: 'The new printer.',
    codec: Printer,
    headers: { Location: 'the printer' },
  },
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    return E.map((p: PrinterDoc) => ({
      status: 201,
      headers: { Location: `/api/v1/printers/${p.printerId}` },
      auditSubjectId: p.printerId,
      auditDetails: { protocol: p.protocol, layout: p.layout },
      body: toPrinter(p),
    }))(await ctx.deps.printing.createPrinter(actor.right, ctx.body));
  },
});

export const patchPrinterRoute = defineRoute({
  operationId: 'updatePrinter',
  method: 'patch',
  path: '/api/v1/printers/{printerId}',
  auth: 'admin',
  summary: "Change a printer's name, protocol, URI, layout or captions' language",
  description: `The result is checked as a creation is. ${HOSTS}`,
  tags: ['printing'],
  params: PrinterIdParams,
  body: PatchPrinterBody,
  response: { status: 200, description: 'The updated printer.', codec: Printer },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async ({ params, body, deps }) =>
    E.map((p: PrinterDoc) => ({
      body: toPrinter(p),
      auditDetails: { protocol: p.protocol, layout: p.layout },
    }))(await deps.printing.patchPrinter(params.printerId, body)),
});

export const deletePrinterRoute = defineRoute({
  operationId: 'deletePrinter',
  method: 'delete',
  path: '/api/v1/printers/{printerId}',
  auth: 'admin',
  summary: 'Remove a printer',
  tags: ['printing'],
  params: PrinterIdParams,
  response: { status: 200, description: 'Removed.', codec: PrinterDeleted },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async ({ params, deps }) =>
    E.map((p: PrinterDoc) => ({ body: { printerId: p.printerId, deleted: true as const } }))(
      await deps.printing.removePrinter(params.printerId),
    ),
});

const accepted = (job: PrintJobDoc) => ({
  status: 202,
  headers: { Location: `/api/v1/print-jobs/${job.jobId}` },
  auditDetails: { jobId: job.jobId, printerId: job.printerId, kind: job.kind, labels: job.checkInIds.length },
  body: { jobId: job.jobId },
});

export const testPrinterRoute = defineRoute({
  operationId: 'testPrinter',
  method: 'post',
  path: '/api/v1/printers/{printerId}/test',
  auth: 'admin',
  summary: 'Print a test label',
  description: "A print job of the printer's test label (a made-up child and code), followed like any other.",
  tags: ['printing'],
  params: PrinterIdParams,
  response: {
    status: 202,
    description: 'The test label is queued.',
    codec: PrintJobAccepted,
    headers: { Location: 'the print job' },
  },
  errors: ['NOT_FOUND'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    return E.map(accepted)(await ctx.deps.printing.testPrinter(actor.right, ctx.params.printerId));
  },
});

const WHO_PRINTS =
  'Those who check children in (CHAMADOR, ADMIN, and custom roles granting `attendance`) print their labels.';

export const createPrintJobRoute = defineRoute({
  operationId: 'createPrintJob',
  method: 'post',
  path: '/api/v1/print-jobs',
  auth: 'chamador',
  permission: 'attendance',
  summary: "Print the labels of check-ins and their guardian's stub",
  description:
    "Answers at once; the service renders the labels in the printer's language (ZPL II, or PDF / PWG Raster over " +
    'IPP) and sends them. An unknown `printerId` or check-in is 400 with the issue at its path. ' +
    WHO_PRINTS,
  tags: ['printing'],
  body: CreatePrintJobBody,
  response: {
    status: 202,
    description: 'The job is queued.',
    codec: PrintJobAccepted,
    headers: { Location: 'the print job' },
  },
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    return E.map(accepted)(await ctx.deps.printing.createJob(actor.right, ctx.body));
  },
});

export const getPrintJobRoute = defineRoute({
  operationId: 'getPrintJob',
  method: 'get',
  path: '/api/v1/print-jobs/{jobId}',
  auth: 'chamador',
  permission: 'attendance',
  summary: "A print job's status",
  description: WHO_PRINTS,
  tags: ['printing'],
  params: PrintJobIdParams,
  response: { status: 200, description: 'The job.', codec: PrintJob },
  errors: ['NOT_FOUND'],
  handler: async ({ params, deps }) =>
    E.map((j: PrintJobDoc) => ({ body: toPrintJob(j) }))(await deps.printing.getJob(params.jobId)),
});

export const printRoutes = [
  listPrintersRoute,
  getPrinterRoute,
  createPrinterRoute,
  patchPrinterRoute,
  deletePrinterRoute,
  testPrinterRoute,
  createPrintJobRoute,
  getPrintJobRoute,
];
