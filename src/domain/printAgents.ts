/**
 * Print agents (issue #38 item 3, decision 0054): a process on the church's network that prints the
 * jobs of the printers the server cannot reach. An ADMIN issues it a token; it polls the server for
 * the jobs of its printers and reports how each one went.
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
import { PrinterProtocolC, PrinterUri, PrintFailureCodeC, PrintJobStatusC } from './printing.js';

const ReadOnlyId = refine(t.string, isUuid, 'a UUID', { format: 'uuid', maxLength: 36, readOnly: true });

const AgentName = boundedString(1, 80, { examples: ['Sala dos fundos'] });

export const CreatePrintAgentBody = object(
  'CreatePrintAgentBody',
  { name: AgentName },
  {},
  { description: 'A name the office knows the agent by (where it runs).' },
);
export type CreatePrintAgentBody = t.TypeOf<typeof CreatePrintAgentBody>;

export const PrintAgent = object(
  'PrintAgent',
  { agentId: ReadOnlyId, name: AgentName, createdAt: IsoInstant },
  { revokedAt: IsoInstant, lastSeenAt: IsoInstant },
  {
    description:
      'An agent that prints for printers the server cannot reach. `revokedAt`: its token no longer works. ' +
      '`lastSeenAt`: its last call for jobs (to the minute).',
  },
);
export type PrintAgent = t.TypeOf<typeof PrintAgent>;

/** The token's form: a prefix the authenticator recognises, the agent's id, and 32 random bytes. */
export const AGENT_TOKEN_PREFIX = 'cpa_';
const AGENT_TOKEN_RE = /^cpa_([0-9a-f-]{36})_([A-Za-z0-9_-]{43})$/;

export const AgentToken = refine(
  t.string,
  (s) => AGENT_TOKEN_RE.test(s),
  'a print agent token (cpa_<agentId>_<secret>)',
  { maxLength: 84, pattern: '^cpa_', readOnly: true },
);

/** The agent's id and secret in a token, or undefined when it is not one. */
export const parseAgentToken = (token: string): { agentId: string; secret: string } | undefined => {
  const m = AGENT_TOKEN_RE.exec(token);
  if (m === null || m[1] === undefined || m[2] === undefined || !isUuid(m[1])) return undefined;
  return { agentId: m[1].toLowerCase(), secret: m[2] };
};

export const PrintAgentIssued = object(
  'PrintAgentIssued',
  { agent: PrintAgent, token: AgentToken },
  {},
  {
    description:
      'The agent and its token, shown here only: the service keeps a digest of it. The agent sends it as ' +
      '`Authorization: Bearer <token>`; it opens the `/print-agents/me` routes and nothing else.',
  },
);

export const MAX_PRINT_AGENTS = 100;

export const PrintAgentList = object(
  'PrintAgentList',
  { items: boundedArray(PrintAgent, MAX_PRINT_AGENTS) },
  {},
  { description: 'Every agent issued, revoked ones included, oldest first.' },
);

export const PrintAgentIdParams = object('PrintAgentIdParams', { agentId: Uuid });

/** The longest an agent's call for jobs waits when none is ready (seconds). */
export const MAX_AGENT_WAIT_S = 30;

export const AgentJobsQuery = object(
  'AgentJobsQuery',
  {},
  {
    wait: refine(
      t.string,
      (s) => /^\d{1,2}$/.test(s) && Number(s) <= MAX_AGENT_WAIT_S,
      `an integer from 0 to ${MAX_AGENT_WAIT_S}`,
      {
        integer: true,
        minimum: 0,
        maximum: MAX_AGENT_WAIT_S,
        description: `Seconds to wait for a job when none is ready (default 0, at most ${MAX_AGENT_WAIT_S}).`,
      },
    ),
  },
);

const PlacedTextC = object(
  'PlacedText',
  {
    text: boundedString(0, 500),
    x: t.number,
    baseline: t.number,
    sizePt: t.number,
    style: t.keyof({ regular: null, bold: null, mono: null }),
    role: t.keyof({
      when: null,
      name: null,
      class: null,
      allergy: null,
      care: null,
      code: null,
      stubChild: null,
      hint: null,
    }),
  },
  { letterSpacing: t.number },
  { description: 'A run of text at a baseline, in points from the top left corner.' },
);

export const PlacedLabelC = object(
  'PlacedLabel',
  { widthPt: t.number, heightPt: t.number, texts: boundedArray(PlacedTextC, 200) },
  {},
  { description: "A label's lines as the server placed them on the layout's page." },
);

/** A family: 20 children and their stub. */
const MAX_LABELS = 21;

export const AgentJob = object(
  'AgentJob',
  {
    jobId: Uuid,
    printer: object('AgentJobPrinter', {
      printerId: Uuid,
      protocol: PrinterProtocolC,
      uri: PrinterUri,
      layout: PrinterLayoutC,
    }),
    labels: boundedArray(PlacedLabelC, MAX_LABELS),
    attempt: boundedInt(1, 1_000),
    leaseUntil: IsoInstant,
  },
  {},
  {
    description:
      "A job claimed for the agent until `leaseUntil`: the labels laid out on the printer's page; the agent " +
      "renders them in the printer's language (ZPL, or PDF / PWG Raster as the IPP printer lists) and sends them.",
  },
);
export type AgentJob = t.TypeOf<typeof AgentJob>;

/** At most this many jobs are handed out in one answer. */
export const MAX_AGENT_JOBS = 20;

export const AgentJobList = object(
  'AgentJobList',
  { items: boundedArray(AgentJob, MAX_AGENT_JOBS) },
  {},
  {
    description:
      'The jobs claimed for the agent: new ones, and those it was given before and has not reported yet ' +
      '(an answer lost on the way is given again).',
  },
);

export const AgentJobReport = object(
  'AgentJobReport',
  { status: t.keyof({ printing: null, done: null, failed: null }) },
  {
    error: object('AgentJobError', { code: PrintFailureCodeC, message: boundedString(0, 500) }),
    sent: object('AgentJobSent', {
      format: boundedString(1, 100),
      bytes: boundedInt(0, 1_000_000_000),
      pages: boundedInt(0, 10_000),
    }),
  },
  {
    description:
      '`printing`: still sending (renews the lease); `done`: the printer accepted it; `failed` with `error`: ' +
      'the attempt failed, and the service decides whether the job is tried again (it is then queued) or fails.',
  },
);
export type AgentJobReport = t.TypeOf<typeof AgentJobReport>;

export const AgentJobParams = object('AgentJobParams', { jobId: Uuid });

export const AgentJobState = object(
  'AgentJobState',
  { jobId: Uuid, status: PrintJobStatusC },
  { error: object('AgentJobStateError', { code: PrintFailureCodeC, message: Text }), leaseUntil: IsoInstant },
  {
    description:
      "The job's state after the report. A report the job had already moved past changes nothing and is " +
      'answered the same (a resent report is harmless).',
  },
);

// ---- stored ----

/** An agent as stored (private database), `printAgent:<agentId>`: a digest of its secret, never the secret. */
export const PrintAgentDoc = t.intersection([
  t.type({
    _id: t.string,
    _rev: t.string,
    docType: t.literal('printAgent'),
    agentId: t.string,
    name: t.string,
    /** SHA-256 of the token's secret, base64url. */
    secretDigest: t.string,
    createdAt: t.string,
    createdBy: t.string,
    revokedAt: nullable(t.string),
  }),
  t.partial({ lastSeenAt: t.string }),
]);
export type PrintAgentDoc = t.TypeOf<typeof PrintAgentDoc>;

export const toPrintAgent = (d: PrintAgentDoc): PrintAgent => ({
  agentId: d.agentId,
  name: d.name,
  createdAt: d.createdAt,
  ...(d.revokedAt === null ? {} : { revokedAt: d.revokedAt }),
  ...(d.lastSeenAt === undefined ? {} : { lastSeenAt: d.lastSeenAt }),
});
