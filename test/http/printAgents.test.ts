/**
 * Print agents, black-box (0054): an ADMIN issues and revokes them; a printer names its agent; the
 * agent calls for its printers' jobs with its own token, which opens nothing else, and reports them.
 * The agent process itself, its printer and a cut connection are in printAgentProcesses.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { zplPrinter } from '../support/fakePrinters.js';
import { useService } from '../support/harness.js';
import { call, decodeAs, expectEnvelope, issuePaths } from '../support/http.js';
import {
  AgentC,
  agentHeaders,
  issueAgent,
  JobStateC,
  jobsOf,
  pollJobs,
  report,
} from '../support/printAgents.js';
import { checkInAll, createPrinter, finishedJob, printLabels, readJob } from '../support/printing.js';
import { DEV_TOKENS } from '../support/testService.js';

const ADMIN = DEV_TOKENS.DEV_ADMIN_TOKEN;
const today = () => new Date().toISOString().slice(0, 10);

describe('print agents', function () {
  this.timeout(60_000);
  // PRINTER_HOSTS leaves the agents' printers out: the service never reaches them, their agent does.
  const h = useService({ env: { PRINTER_HOSTS: 'printers.example.org', PRINT_GIVE_UP_SECONDS: '30' } });
  let sessionId: string;
  let studentIds: ReadonlyArray<string>;
  before(async () => {
    ({ sessionId, studentIds } = await h.seedRoster({
      students: ['Ana Beatriz', 'Bruno Souza', 'Caio Lima', 'Davi Rocha'],
      date: today(),
    }));
  });

  const agentPrinter = (agentId: string, uri = 'tcp://10.0.0.7:9100') =>
    createPrinter(h.url, {
      name: `Porta ${agentId.slice(0, 4)}`,
      protocol: 'zpl',
      uri,
      layout: 'label4x6',
      agentId,
    });

  const oneCheckIn = async (i: number): Promise<string> => {
    const [c] = await checkInAll(h.url, sessionId, [studentIds[i] ?? '']);
    if (c === undefined) throw new Error('no check-in');
    return c.checkInId;
  };

  it('an ADMIN issues an agent: its token is shown, a retry under the same key answers the same, the list never shows it; audited', async () => {
    const key = randomUUID();
    const first = await issueAgent(h.url, 'Sala dos fundos', key);
    expect(first.token).to.match(/^cpa_[0-9a-f-]{36}_[A-Za-z0-9_-]{43}$/);
    expect(first.token).to.contain(first.agentId);
    const again = await issueAgent(h.url, 'Sala dos fundos', key);
    expect(again).to.deep.equal(first);
    const list = await h.get(`/api/v1/print-agents`, ADMIN);
    expect(list.status, list.text).to.equal(200);
    expect(list.text).not.to.contain(first.token.slice(-43));
    const listed = decodeAs(t.type({ items: t.array(AgentC) }), list.json).items;
    expect(listed.filter((a) => a.agentId === first.agentId)).to.have.length(1);
    const audit = await h.get(`/api/v1/audit-logs?subjectId=${first.agentId}`, ADMIN);
    expect(audit.status, audit.text).to.equal(200);
    expect(audit.text).to.contain('POST /api/v1/print-agents');
  });

  it('only an ADMIN issues or revokes agents', async () => {
    expectEnvelope(
      await h.send('POST', `/api/v1/print-agents`, { name: 'x' }, DEV_TOKENS.DEV_CALLER_TOKEN),
      403,
      'FORBIDDEN_ROLE',
    );
    const agent = await issueAgent(h.url, 'Secretaria');
    expectEnvelope(
      await h.send('DELETE', `/api/v1/print-agents/${agent.agentId}`, undefined, DEV_TOKENS.DEV_CALLER_TOKEN),
      403,
      'FORBIDDEN_ROLE',
    );
  });

  it("an agent's token opens the agent's routes and nothing else", async () => {
    const agent = await issueAgent(h.url, 'Escopo');
    expect((await pollJobs(h.url, agent)).status).to.equal(200);
    // ADMIN's routes, and those open to any signed-in user (`bearer`).
    for (const path of ['/api/v1/printers', '/api/v1/print-agents', '/api/v1/classes', '/api/v1/students']) {
      expectEnvelope(await call(`${h.url}${path}`, { headers: agentHeaders(agent) }), 403, 'FORBIDDEN_ROLE');
    }
    const r = await call(`${h.url}/api/v1/print-jobs`, {
      method: 'POST',
      headers: {
        ...agentHeaders(agent),
        'Content-Type': 'application/json',
        'Idempotency-Key': randomUUID(),
      },
      body: JSON.stringify({ printerId: randomUUID(), checkInIds: [randomUUID()] }),
    });
    expectEnvelope(r, 403, 'FORBIDDEN_ROLE');
    // And no user reaches the agent's routes, an ADMIN included.
    expectEnvelope(await h.get(`/api/v1/print-agents/me/jobs`, ADMIN), 403, 'FORBIDDEN_ROLE');
  });

  it('a revoked token is 401; a forged secret is 401; revoking twice answers the same', async () => {
    const agent = await issueAgent(h.url, 'Revogado');
    const forged = { ...agent, token: `${agent.token.slice(0, -4)}AAAA` };
    expectEnvelope(await pollJobs(h.url, forged), 401, 'UNAUTHORIZED');
    const revoked = await h.send('DELETE', `/api/v1/print-agents/${agent.agentId}`, undefined, ADMIN);
    expect(revoked.status, revoked.text).to.equal(200);
    expect(decodeAs(AgentC, revoked.json).revokedAt).to.be.a('string');
    expectEnvelope(await pollJobs(h.url, agent), 401, 'UNAUTHORIZED');
    const twice = await h.send('DELETE', `/api/v1/print-agents/${agent.agentId}`, undefined, ADMIN);
    expect(decodeAs(AgentC, twice.json).revokedAt).to.equal(decodeAs(AgentC, revoked.json).revokedAt);
    // A printer may not name a revoked or unknown agent.
    for (const agentId of [agent.agentId, randomUUID()]) {
      const r = await h.send(
        'POST',
        `/api/v1/printers`,
        { name: 'X', protocol: 'zpl', uri: 'tcp://10.0.0.9:9100', layout: 'label4x6', agentId },
        ADMIN,
      );
      expect(issuePaths(expectEnvelope(r, 400, 'VALIDATION_FAILED'))).to.deep.equal(['body.agentId']);
    }
  });

  it("a printer's job goes to its agent, under a lease, again until reported; another agent is not given it", async () => {
    const mine = await issueAgent(h.url, 'Minha');
    const other = await issueAgent(h.url, 'Outra');
    // Outside PRINTER_HOSTS: allowed, since the service never connects to it.
    const printerId = await agentPrinter(mine.agentId);
    const jobId = await printLabels(h.url, printerId, [await oneCheckIn(0)]);
    const given = await jobsOf(h.url, mine);
    expect(given.map((j) => j.jobId)).to.deep.equal([jobId]);
    const job = given[0];
    expect(job?.printer).to.deep.include({
      printerId,
      protocol: 'zpl',
      uri: 'tcp://10.0.0.7:9100',
      layout: 'label4x6',
    });
    expect(job?.labels).to.have.length(2);
    expect(job?.labels[0]?.texts.map((x) => x.text)).to.include('Ana Beatriz');
    expect((await readJob(h.url, jobId)).status).to.equal('printing');
    // An answer lost on the way: the next call gives the same job, the same attempt.
    const again = await jobsOf(h.url, mine);
    expect(again.map((j) => [j.jobId, j.attempt])).to.deep.equal([[jobId, 1]]);
    expect(await jobsOf(h.url, other)).to.deep.equal([]);
    expectEnvelope(await report(h.url, other, jobId, { status: 'done' }), 404, 'NOT_FOUND');

    const done = await report(h.url, mine, jobId, {
      status: 'done',
      sent: { format: 'application/vnd.zebra-zpl', bytes: 900, pages: 2 },
    });
    expect(done.status, done.text).to.equal(200);
    expect(decodeAs(JobStateC, done.json).status).to.equal('done');
    expect(await readJob(h.url, jobId)).to.deep.include({ status: 'done', attempts: 1 });
    // The same report again (its answer lost), under another key: the same state, nothing changes.
    const resent = await report(h.url, mine, jobId, { status: 'done' });
    expect(decodeAs(JobStateC, resent.json).status).to.equal('done');
    const late = await report(h.url, mine, jobId, {
      status: 'failed',
      error: { code: 'PRINTER_BUSY', message: 'x' },
    });
    expect(decodeAs(JobStateC, late.json).status).to.equal('done');
    expect(await jobsOf(h.url, mine)).to.deep.equal([]);
  });

  it('a failed attempt is queued again by the rule the worker follows, then handed again as a new attempt', async () => {
    const agent = await issueAgent(h.url, 'Falha');
    const printerId = await agentPrinter(agent.agentId);
    const jobId = await printLabels(h.url, printerId, [await oneCheckIn(1)]);
    expect((await jobsOf(h.url, agent)).map((j) => j.jobId)).to.deep.equal([jobId]);
    const r = await report(h.url, agent, jobId, {
      status: 'failed',
      error: { code: 'PRINTER_UNREACHABLE', message: 'off' },
    });
    expect(r.status, r.text).to.equal(200);
    expect(decodeAs(JobStateC, r.json)).to.deep.include({
      status: 'queued',
      error: { code: 'PRINTER_UNREACHABLE', message: 'off' },
    });
    // The rule's first wait is 1 s: a call that waits gets the job back as attempt 2.
    const back = await jobsOf(h.url, agent, 5);
    expect(back.map((j) => [j.jobId, j.attempt])).to.deep.equal([[jobId, 2]]);
    const refused = await report(h.url, agent, jobId, {
      status: 'failed',
      error: { code: 'PRINTER_REFUSED', message: 'no' },
    });
    expect(decodeAs(JobStateC, refused.json).status).to.equal('failed');
    expect((await readJob(h.url, jobId)).error?.code).to.equal('PRINTER_REFUSED');
    // A failure without its reason is a 400 at its path.
    const jobId2 = await printLabels(h.url, printerId, [await oneCheckIn(2)]);
    expect((await jobsOf(h.url, agent)).map((j) => j.jobId)).to.deep.equal([jobId2]);
    expect(
      issuePaths(
        expectEnvelope(await report(h.url, agent, jobId2, { status: 'failed' }), 400, 'VALIDATION_FAILED'),
      ),
    ).to.deep.equal(['body.error']);
    expect((await report(h.url, agent, jobId2, { status: 'done' })).status).to.equal(200);
  });

  it('a waiting call is answered when a job is queued; the service itself never connects to an agent printer', async () => {
    const printer = await zplPrinter();
    try {
      const agent = await issueAgent(h.url, 'Espera');
      // The service could reach this one (127.0.0.1 is not in PRINTER_HOSTS, but it is the agent's).
      const printerId = await agentPrinter(agent.agentId, printer.uri);
      const waiting = jobsOf(h.url, agent, 20);
      const jobId = await printLabels(h.url, printerId, [await oneCheckIn(3)]);
      const given = await waiting;
      expect(given.map((j) => j.jobId)).to.deep.equal([jobId]);
      expect(printer.jobs, 'the service sent nothing itself').to.deep.equal([]);
      expect((await report(h.url, agent, jobId, { status: 'done' })).status).to.equal(200);
      expect(await finishedJob(h.url, jobId)).to.deep.include({ status: 'done' });
      expect(printer.jobs).to.deep.equal([]);
    } finally {
      await printer.close();
    }
  });

  it('the wait is bounded: wait above 30 s is 400; an empty wait answers no jobs', async () => {
    const agent = await issueAgent(h.url, 'Limites');
    expect(
      issuePaths(expectEnvelope(await pollJobs(h.url, agent, 31), 400, 'VALIDATION_FAILED')),
    ).to.deep.equal(['query.wait']);
    expect(await jobsOf(h.url, agent, 1)).to.deep.equal([]);
  });

  it('handing a printer back to the service (agentId: null) checks PRINTER_HOSTS as for any of its printers', async () => {
    const printer = await zplPrinter();
    try {
      const agent = await issueAgent(h.url, 'Devolve');
      const printerId = await agentPrinter(agent.agentId, printer.uri);
      // PRINTER_HOSTS does not list 127.0.0.1: handing it back is refused there, as for any printer.
      const r = await h.send('PATCH', `/api/v1/printers/${printerId}`, { agentId: null }, ADMIN);
      expect(issuePaths(expectEnvelope(r, 400, 'VALIDATION_FAILED'))).to.deep.equal(['body.uri']);
      const read = await h.get(`/api/v1/printers/${printerId}`, ADMIN);
      expect(decodeAs(t.type({ agentId: t.string }), read.json).agentId).to.equal(agent.agentId);
    } finally {
      await printer.close();
    }
  });
});
