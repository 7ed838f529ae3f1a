/** Print agents through the API (0054): issued by an ADMIN, calling with their own token. */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { call, decodeAs, type HttpResult } from './http.js';
import { DEV_TOKENS, mutationHeaders } from './testService.js';

export const AgentC = t.intersection([
  t.type({ agentId: t.string, name: t.string, createdAt: t.string }),
  t.partial({ revokedAt: t.string, lastSeenAt: t.string }),
]);

export const AgentJobC = t.type({
  jobId: t.string,
  printer: t.type({ printerId: t.string, protocol: t.string, uri: t.string, layout: t.string }),
  labels: t.array(
    t.type({ widthPt: t.number, heightPt: t.number, texts: t.array(t.type({ text: t.string })) }),
  ),
  attempt: t.number,
  leaseUntil: t.string,
});
export const AgentJobsC = t.type({ items: t.array(AgentJobC) });

export const JobStateC = t.intersection([
  t.type({ jobId: t.string, status: t.string }),
  t.partial({ error: t.type({ code: t.string, message: t.string }), leaseUntil: t.string }),
]);

export interface IssuedAgent {
  readonly agentId: string;
  readonly token: string;
}

export const issueAgent = async (
  url: string,
  name: string,
  key: string = randomUUID(),
): Promise<IssuedAgent> => {
  const r = await call(`${url}/api/v1/print-agents`, {
    method: 'POST',
    headers: mutationHeaders(DEV_TOKENS.DEV_ADMIN_TOKEN, key),
    body: JSON.stringify({ name }),
  });
  expect(r.status, r.text).to.equal(201);
  const body = decodeAs(t.type({ agent: AgentC, token: t.string }), r.json);
  return { agentId: body.agent.agentId, token: body.token };
};

/** What the agent sends on every call: its token, and its id as the device. */
export const agentHeaders = (agent: IssuedAgent): Record<string, string> => ({
  Authorization: `Bearer ${agent.token}`,
  'X-Device-Id': agent.agentId,
});

export const pollJobs = (url: string, agent: IssuedAgent, wait = 0): Promise<HttpResult> =>
  call(`${url}/api/v1/print-agents/me/jobs?wait=${wait}`, { headers: agentHeaders(agent) });

export const jobsOf = async (url: string, agent: IssuedAgent, wait = 0) => {
  const r = await pollJobs(url, agent, wait);
  expect(r.status, r.text).to.equal(200);
  return decodeAs(AgentJobsC, r.json).items;
};

export const report = (
  url: string,
  agent: IssuedAgent,
  jobId: string,
  body: unknown,
  key: string = randomUUID(),
): Promise<HttpResult> =>
  call(`${url}/api/v1/print-agents/me/jobs/${jobId}/status`, {
    method: 'POST',
    headers: { ...agentHeaders(agent), 'Content-Type': 'application/json', 'Idempotency-Key': key },
    body: JSON.stringify(body),
  });
