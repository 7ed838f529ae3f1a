/**
 * Printers set up in the office and print jobs sent to them (issue #38, decision 0051): the request
 * and response shapes, and the stored documents.
 */
import * as t from 'io-ts';
import {
  boundedArray,
  boundedInt,
  boundedString,
  IsoInstant,
  isUuid,
  nullable,
  object,
  refine,
  Text,
  Uuid,
} from './codec.js';
import { PrinterLayoutC } from './labelLayouts.js';

export const PRINTER_PROTOCOLS = ['ipp', 'zpl'] as const;
export type PrinterProtocol = (typeof PRINTER_PROTOCOLS)[number];
export const PrinterProtocolC = t.keyof({ ipp: null, zpl: null });

/** The language of the label's captions ("Código", "ALERGIA"); the names are the roster's. */
export const LabelLanguageC = t.keyof({ 'pt-BR': null, en: null });
export type LabelLanguage = t.TypeOf<typeof LabelLanguageC>;

/** Where a printer is reached: IPP (`ipp://`, `ipps://`, port 631 unless named) or raw TCP (`tcp://`, 9100). */
export interface PrinterAddress {
  readonly scheme: 'ipp' | 'ipps' | 'tcp';
  /** Lower case; an IPv6 literal without its brackets. */
  readonly host: string;
  readonly port: number;
  /** The IPP resource (`/ipp/print`); `/` for raw TCP. */
  readonly path: string;
}

const DEFAULT_PORTS = { ipp: 631, ipps: 631, tcp: 9100 } as const;
const PRINTER_URI_MAX = 300;

/**
 * The address a printer URI names, or undefined when it is not one: `ipp://`, `ipps://` or `tcp://`,
 * a host, an optional port, no user or password, no query or fragment (a printer takes none, and a
 * password in a URI would be shown to every ADMIN who lists printers).
 */
export const printerAddress = (uri: string): PrinterAddress | undefined => {
  if (uri.length > PRINTER_URI_MAX) return undefined;
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return undefined;
  }
  const scheme = u.protocol.slice(0, -1);
  if (scheme !== 'ipp' && scheme !== 'ipps' && scheme !== 'tcp') return undefined;
  if (u.hostname === '' || u.username !== '' || u.password !== '' || u.search !== '' || u.hash !== '') {
    return undefined;
  }
  if (scheme === 'tcp' && u.pathname !== '' && u.pathname !== '/') return undefined;
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  return {
    scheme,
    host: host.toLowerCase(),
    port: u.port === '' ? DEFAULT_PORTS[scheme] : Number(u.port),
    path: scheme === 'tcp' || u.pathname === '' ? '/' : u.pathname,
  };
};

export const PrinterUri = refine(
  t.string,
  (s) => printerAddress(s) !== undefined,
  'a printer URI: ipp://host[:port]/path, ipps://host[:port]/path or tcp://host[:port]',
  {
    maxLength: PRINTER_URI_MAX,
    pattern: '^(ipp|ipps|tcp)://',
    // Loopback: a client (or the registry-driven fuzz) trying the example reaches no other machine.
    examples: ['ipp://localhost:631/ipp/print', 'tcp://localhost:9100'],
  },
);

/** Which URI schemes each protocol speaks: IPP over HTTP (or TLS), ZPL over a raw TCP socket. */
export const schemesOf: Readonly<Record<PrinterProtocol, ReadonlyArray<PrinterAddress['scheme']>>> = {
  ipp: ['ipp', 'ipps'],
  zpl: ['tcp'],
};

const PrinterName = boundedString(1, 80, { examples: ['Recepção 1'] });

const ReadOnlyId = refine(t.string, isUuid, 'a UUID', { format: 'uuid', maxLength: 36, readOnly: true });
const ReadOnlyInstant = refine(IsoInstant, () => true, 'a UTC ISO 8601 timestamp ending in Z', {
  format: 'date-time',
  readOnly: true,
});

const AGENT_SAID =
  "`agentId`: a print agent on the printer's network sends its jobs (decision 0054); the service then never " +
  'connects to the printer, and `PRINTER_HOSTS` does not apply.';

const PROTOCOLS_SAID =
  '`protocol` `ipp` (IPP Everywhere / AirPrint-class printers, and DYMO or Brother through CUPS) takes an ' +
  '`ipp://` or `ipps://` URI; `zpl` (Zebra-type printers, ZPL II on raw TCP) a `tcp://` URI. When ' +
  '`PRINTER_HOSTS` is set, the host must be one of them.';

export const CreatePrinterBody = object(
  'CreatePrinterBody',
  { name: PrinterName, protocol: PrinterProtocolC, uri: PrinterUri, layout: PrinterLayoutC },
  { labelLanguage: LabelLanguageC, agentId: Uuid },
  {
    description: `${PROTOCOLS_SAID} \`labelLanguage\` (default \`pt-BR\`) is the captions' language. ${AGENT_SAID}`,
  },
);
export type CreatePrinterBody = t.TypeOf<typeof CreatePrinterBody>;

export const PatchPrinterBody = object(
  'PatchPrinterBody',
  {},
  {
    name: PrinterName,
    protocol: PrinterProtocolC,
    uri: PrinterUri,
    layout: PrinterLayoutC,
    labelLanguage: LabelLanguageC,
    agentId: nullable(Uuid),
  },
  {
    description: `Any subset of the printer's fields; the result must still be consistent. ${PROTOCOLS_SAID} ${AGENT_SAID} \`agentId: null\`: the service prints to it again.`,
  },
);
export type PatchPrinterBody = t.TypeOf<typeof PatchPrinterBody>;

export const Printer = object(
  'Printer',
  {
    printerId: ReadOnlyId,
    name: PrinterName,
    protocol: PrinterProtocolC,
    layout: PrinterLayoutC,
    labelLanguage: LabelLanguageC,
    createdAt: ReadOnlyInstant,
    updatedAt: ReadOnlyInstant,
  },
  { uri: PrinterUri, agentId: Uuid },
  {
    description:
      'A label printer the service prints to, or its print agent (`agentId`). `printerId`, `createdAt`, ' +
      "`updatedAt` are read-only. `uri` is given to an ADMIN only: the door's roles list printers to choose " +
      "one, and where a printer sits on the church's network is the office's business.",
  },
);
export type Printer = t.TypeOf<typeof Printer>;

/** A printer as the door's roles read it: everything but where it is reached. */
export const toDoorPrinter = (d: PrinterDoc): Printer => {
  const { uri: _office, ...door } = toPrinter(d);
  return door;
};

/** A church has a few doors; the list is not paged. */
export const MAX_PRINTERS = 200;

export const PrinterList = object(
  'PrinterList',
  { items: boundedArray(Printer, MAX_PRINTERS) },
  {},
  { description: 'Ordered by name.' },
);

export const PrinterIdParams = object('PrinterIdParams', { printerId: Uuid });

/** A family checks in together: a stub lists them all. More than 20 children is not one family. */
export const MAX_CHECKINS_PER_JOB = 20;

export const CreatePrintJobBody = object(
  'CreatePrintJobBody',
  {
    printerId: Uuid,
    checkInIds: refine(
      boundedArray(Uuid, MAX_CHECKINS_PER_JOB),
      (a) => a.length >= 1 && new Set(a.map((s) => s.toLowerCase())).size === a.length,
      `1 to ${MAX_CHECKINS_PER_JOB} distinct check-in ids`,
      { minItems: 1, maxItems: MAX_CHECKINS_PER_JOB },
    ),
  },
  {},
  {
    description:
      "One label per check-in and one guardian's stub listing them all, with each child's code, as the " +
      'kiosk prints them (0028).',
  },
);
export type CreatePrintJobBody = t.TypeOf<typeof CreatePrintJobBody>;

export const PrintJobAccepted = object(
  'PrintJobAccepted',
  { jobId: Uuid },
  {},
  { description: 'The job is queued; `GET /api/v1/print-jobs/{jobId}` follows it.' },
);

export const PRINT_JOB_STATUSES = ['queued', 'printing', 'done', 'failed'] as const;
export const PrintJobStatusC = t.keyof({ queued: null, printing: null, done: null, failed: null });
export type PrintJobStatus = t.TypeOf<typeof PrintJobStatusC>;

/**
 * Why a job failed, for the door's screen and the office: the printer could not be reached, answered
 * something that is not its protocol, refused the job, or lists no format the service renders; the
 * job's check-ins or its printer were gone.
 */
export const PrintFailureCodeC = t.keyof({
  PRINTER_UNREACHABLE: null,
  PRINTER_TIMEOUT: null,
  PRINTER_BAD_ANSWER: null,
  PRINTER_BUSY: null,
  PRINTER_REFUSED: null,
  PRINTER_NO_FORMAT: null,
  PRINTER_REMOVED: null,
  NOTHING_TO_PRINT: null,
});
export type PrintFailureCode = t.TypeOf<typeof PrintFailureCodeC>;

export const PrintFailure = object(
  'PrintFailure',
  { code: PrintFailureCodeC, message: Text },
  {},
  { description: 'What the last attempt met; no personal data.' },
);
export type PrintFailure = t.TypeOf<typeof PrintFailure>;

export const PrintJob = object(
  'PrintJob',
  {
    jobId: Uuid,
    printerId: Uuid,
    status: PrintJobStatusC,
    attempts: boundedInt(0, 1_000),
    createdAt: IsoInstant,
    updatedAt: IsoInstant,
  },
  { error: PrintFailure },
  {
    description:
      '`queued`: waiting for the printer (also between attempts, `error` then says what the last one met); ' +
      '`printing`: being sent; `done`: the printer accepted it; `failed`: the printer was retried for the ' +
      'bound and `error` says why.',
  },
);
export type PrintJob = t.TypeOf<typeof PrintJob>;

export const PrintJobIdParams = object('PrintJobIdParams', { jobId: Uuid });

// ---- stored documents ----

/** A printer as stored (private database), `printer:<printerId>`. */
export const PrinterDoc = t.intersection([
  t.type({
    _id: t.string,
    _rev: t.string,
    docType: t.literal('printer'),
    printerId: t.string,
    name: t.string,
    protocol: PrinterProtocolC,
    uri: t.string,
    layout: PrinterLayoutC,
    labelLanguage: LabelLanguageC,
    createdAt: t.string,
    updatedAt: t.string,
  }),
  /** The print agent that sends its jobs (0054); absent: this service does. Older printers have none. */
  t.partial({ agentId: t.string }),
]);
export type PrinterDoc = t.TypeOf<typeof PrinterDoc>;

/** What a job prints: the labels of check-ins, or the printer's test label. */
export const PrintJobKindC = t.keyof({ labels: null, test: null });
export type PrintJobKind = t.TypeOf<typeof PrintJobKindC>;

/**
 * A print job as stored (requests database), `printjob:<jobId>`. `claimedBy` and `leaseUntil` are the
 * claim of whoever sends it (this service's worker, or a print agent later): a claim is taken by
 * compare-and-swap and lapses at `leaseUntil`, so a worker that died mid-job leaves it to the next.
 */
export const PrintJobDoc = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('printJob'),
  jobId: t.string,
  printerId: t.string,
  kind: PrintJobKindC,
  checkInIds: t.array(t.string),
  status: PrintJobStatusC,
  error: nullable(t.type({ code: PrintFailureCodeC, message: t.string })),
  attempts: t.number,
  createdAt: t.string,
  createdBy: t.string,
  updatedAt: t.string,
  /** No attempt before this instant (the wait between attempts). */
  notBefore: t.string,
  /** After this instant a job that has not printed fails instead of trying again. */
  giveUpAt: t.string,
  claimedBy: nullable(t.string),
  leaseUntil: nullable(t.string),
  /** What was sent, once done: the document format (MIME type) and its size. */
  sent: nullable(t.type({ format: t.string, bytes: t.number, pages: t.number })),
});
export type PrintJobDoc = t.TypeOf<typeof PrintJobDoc>;

export const toPrinter = (d: PrinterDoc): Printer => ({
  printerId: d.printerId,
  name: d.name,
  protocol: d.protocol,
  uri: d.uri,
  layout: d.layout,
  labelLanguage: d.labelLanguage,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
  ...(d.agentId === undefined ? {} : { agentId: d.agentId }),
});

export const toPrintJob = (d: PrintJobDoc): PrintJob => ({
  jobId: d.jobId,
  printerId: d.printerId,
  status: d.status,
  attempts: d.attempts,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
  ...(d.error === null ? {} : { error: d.error }),
});

/** Kept for the ADMIN's and the door's questions about a day's printing, then purged. */
export const PRINT_JOB_KEEP_MS = 7 * 24 * 60 * 60 * 1000;
