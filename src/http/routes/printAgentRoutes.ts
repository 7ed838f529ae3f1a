/**
 * Print agents (decision 0054): ADMIN issues and revokes them; an agent, with its own token, calls
 * for the jobs of the printers that name it and reports how each went. The agent's routes are the
 * only ones its token opens (auth class `printAgent`).
 */
import * as E from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import { apiError } from '../../domain/errors.js';
import {
  AgentJobList,
  AgentJobParams,
  AgentJobReport,
  AgentJobState,
  AgentJobsQuery,
  CreatePrintAgentBody,
  MAX_AGENT_WAIT_S,
  PrintAgent,
  type PrintAgentDoc,
  PrintAgentIdParams,
  PrintAgentIssued,
  PrintAgentList,
  toPrintAgent,
} from '../../domain/printAgents.js';
import { actorOf } from '../actor.js';
import { defineRoute } from '../route.js';

export const createPrintAgentRoute = defineRoute({
  operationId: 'createPrintAgent',
  method: 'post',
  path: '/api/v1/print-agents',
  auth: 'admin',
  summary: 'Issue a print agent and its token',
  description:
    "For printers the service cannot reach (it runs elsewhere; they are on the church's network): the agent runs " +
    'there (`npm run print-agent -- --server URL`, token in `PRINT_AGENT_TOKEN`) and keeps calling out for jobs, ' +
    'so the church opens no port. A printer names the agent in `agentId`. The token is answered here (and to a ' +
    'retry under the same Idempotency-Key); the service keeps only its digest.',
  tags: ['printing'],
  body: CreatePrintAgentBody,
  response: {
    status: 201,
    description: 'The agent and its token.',
    codec: PrintAgentIssued,
    headers: { Location: 'the agent' },
  },
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    return E.map(({ agent, token }: { agent: PrintAgentDoc; token: string }) => ({
      status: 201,
      headers: { Location: `/api/v1/print-agents/${agent.agentId}` },
      auditSubjectId: agent.agentId,
      body: { agent: toPrintAgent(agent), token },
    }))(await ctx.deps.printAgents.issue(actor.right, ctx.body));
  },
});

export const listPrintAgentsRoute = defineRoute({
  operationId: 'listPrintAgents',
  method: 'get',
  path: '/api/v1/print-agents',
  auth: 'admin',
  summary: 'Every print agent issued',
  tags: ['printing'],
  response: { status: 200, description: 'The agents, revoked ones included.', codec: PrintAgentList },
  handler: async ({ deps }) =>
    E.right({ body: { items: (await deps.printAgents.list()).map(toPrintAgent) } }),
});

export const revokePrintAgentRoute = defineRoute({
  operationId: 'revokePrintAgent',
  method: 'delete',
  path: '/api/v1/print-agents/{agentId}',
  auth: 'admin',
  summary: "Revoke a print agent's token",
  description:
    'Its next call is 401. Its printers keep naming it: their jobs wait, and fail at their bound, until a printer ' +
    'names another agent (or `agentId: null`, the service prints to it again). Revoking twice answers the same.',
  tags: ['printing'],
  params: PrintAgentIdParams,
  response: { status: 200, description: 'The revoked agent.', codec: PrintAgent },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async ({ params, deps }) =>
    E.map((a: PrintAgentDoc) => ({ body: toPrintAgent(a), auditSubjectId: a.agentId }))(
      await deps.printAgents.revoke(params.agentId),
    ),
});

const agentIdOf = (principal: { readonly printAgentId?: string } | null) =>
  principal?.printAgentId === undefined
    ? E.left(apiError('UNAUTHORIZED', 'A print agent token is required.'))
    : E.right(principal.printAgentId);

export const agentJobsRoute = defineRoute({
  operationId: 'printAgentJobs',
  method: 'get',
  path: '/api/v1/print-agents/me/jobs',
  auth: 'printAgent',
  summary: "The print jobs of the agent's printers, claimed for it",
  description:
    'Claims the jobs ready for the printers that name this agent, for a lease (`leaseUntil`), and answers them ' +
    'with the jobs it already holds and has not reported. With `wait`, the call waits that many seconds for a ' +
    'job new to the agent (a long poll: the agent keeps one call open, the church opens no port); with `wait=0` ' +
    '(after a start or a lost answer) it answers at once with what the agent holds. A claim ' +
    'whose lease lapses without a report is claimed again as a new attempt.',
  tags: ['printing'],
  query: AgentJobsQuery,
  response: { status: 200, description: 'The jobs (none when the wait ended empty).', codec: AgentJobList },
  deadline: {
    ms: (MAX_AGENT_WAIT_S + 10) * 1000,
    why: `a long poll: it waits up to ${MAX_AGENT_WAIT_S} s for a job by design`,
  },
  handler: async ({ query, principal, deps }) => {
    const agentId = agentIdOf(principal);
    if (E.isLeft(agentId)) return agentId;
    const waitMs = query.wait === undefined ? 0 : Number(query.wait) * 1000;
    return E.right({ body: { items: await deps.printAgents.jobsFor(agentId.right, waitMs) } });
  },
});

export const agentJobStatusRoute = defineRoute({
  operationId: 'reportPrintAgentJob',
  method: 'post',
  path: '/api/v1/print-agents/me/jobs/{jobId}/status',
  auth: 'printAgent',
  summary: 'Report how a job went',
  description:
    '`done` ends the job (the printer took it), even when the claim had lapsed meanwhile. `failed` (with `error`) ' +
    'and `printing` count from the holder of the claim; from anyone else they change nothing. A report on a ' +
    'finished job answers its state. A job of a printer that does not name this agent is 404.',
  tags: ['printing'],
  params: AgentJobParams,
  body: AgentJobReport,
  response: { status: 200, description: "The job's state after the report.", codec: AgentJobState },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async ({ params, body, principal, deps }) => {
    const agentId = agentIdOf(principal);
    if (E.isLeft(agentId)) return agentId;
    return E.map((state: t.TypeOf<typeof AgentJobState>) => ({
      body: state,
      auditSubjectId: state.jobId,
      auditDetails: { reported: body.status, ...(body.error === undefined ? {} : { code: body.error.code }) },
    }))(await deps.printAgents.report(agentId.right, params.jobId, body));
  },
});

export const printAgentRoutes = [
  createPrintAgentRoute,
  listPrintAgentsRoute,
  revokePrintAgentRoute,
  agentJobsRoute,
  agentJobStatusRoute,
];
