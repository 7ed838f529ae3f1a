/**
 * Print agents' claims and reports on the store (0054), on each backend, with the clock in the
 * test's hands: a lease that lapses is claimed again as a new attempt, `done` counts even from a
 * lapsed claim, a stale failure changes nothing, a job past its bound fails rather than being handed
 * out, and the server's worker leaves an agent's printer alone until the bound has passed. Tokens:
 * the same agent gives the same token, a wrong or revoked one is refused.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Actor } from '../../src/domain/principal.js';
import type { PrinterDoc, PrintJobDoc } from '../../src/domain/printing.js';
import { agentOwner, printAgentService } from '../../src/printing/printAgentService.js';
import { printWorker } from '../../src/printing/printWorker.js';
import { testLabelsOf } from '../../src/rules/labels.js';
import { ensureIndexes, indexSpecs } from '../../src/store/indexes.js';
import { printAgentStore } from '../../src/store/printAgents.js';
import { printerStore } from '../../src/store/printers.js';
import { printJobStore } from '../../src/store/printJobs.js';
import { withQuorumWrites } from '../../src/store/quorumWrites.js';
import { databasePerTest, storeBackends } from '../support/storeBackends.js';

const T0 = Date.parse('2026-11-29T09:00:00.000Z');
const LEASE_MS = 30_000;

const actor = (): Actor => ({
  principal: {
    userId: 'dev-admin',
    roles: ['ADMIN'],
    primaryRole: 'ADMIN',
    permissions: [],
    authMode: 'dev',
  },
  deviceId: null,
  requestKey: `dev-admin\n${randomUUID()}`,
});

for (const [name, host] of storeBackends('print-agents')) {
  describe(`print agents' claims and reports on ${name}`, () => {
    const per = databasePerTest(host, 'print-agents');
    let now = T0;
    const clock = () => new Date(now);

    const setUp = async () => {
      now = T0;
      const db = withQuorumWrites(per.db());
      await ensureIndexes(per.db(), indexSpecs.requests);
      const agents = printAgentStore(db);
      const printers = printerStore(db);
      const jobs = printJobStore(db);
      const service = printAgentService({
        agents,
        printers,
        jobs,
        content: { contentOf: async () => testLabelsOf('en', 'now') },
        clock,
        tokenKey: new Uint8Array(32).fill(7),
        leaseMs: LEASE_MS,
        recheckMs: 50,
      });
      const issued = await service.issue(actor(), { name: 'Sala' });
      if (issued._tag === 'Left') throw new Error('not issued');
      const agentId = issued.right.agent.agentId;
      const printer = await printers.create({
        printerId: randomUUID(),
        name: 'Zebra',
        protocol: 'zpl',
        uri: 'tcp://10.0.0.7:9100',
        layout: 'label4x6',
        labelLanguage: 'en',
        createdAt: clock().toISOString(),
        updatedAt: clock().toISOString(),
        agentId,
      });
      if (printer === 'EXISTS') throw new Error('printer exists');
      const queue = async (giveUpInMs = 60_000): Promise<string> => {
        const jobId = randomUUID();
        const at = clock().toISOString();
        await jobs.create({
          jobId,
          printerId: printer.printerId,
          kind: 'test',
          checkInIds: [],
          status: 'queued',
          error: null,
          attempts: 0,
          createdAt: at,
          createdBy: 'dev-caller',
          updatedAt: at,
          notBefore: at,
          giveUpAt: new Date(now + giveUpInMs).toISOString(),
          claimedBy: null,
          leaseUntil: null,
          sent: null,
        });
        return jobId;
      };
      const read = async (jobId: string): Promise<PrintJobDoc> => {
        const j = await jobs.get(jobId);
        if (j === undefined) throw new Error('no job');
        return j;
      };
      return { service, agentId, token: issued.right.token, printer, jobs, printers, queue, read, agents };
    };

    it('a lease that lapses is claimed again as a new attempt; until then the same claim is handed again', async () => {
      const { service, agentId, queue, read } = await setUp();
      const jobId = await queue();
      const first = await service.jobsFor(agentId, 0);
      expect(first.map((j) => [j.jobId, j.attempt])).to.deep.equal([[jobId, 1]]);
      expect(first[0]?.labels.length).to.be.greaterThan(0);
      now += LEASE_MS - 1;
      expect((await service.jobsFor(agentId, 0)).map((j) => j.attempt)).to.deep.equal([1]);
      now += 2;
      expect((await service.jobsFor(agentId, 0)).map((j) => j.attempt)).to.deep.equal([2]);
      expect(await read(jobId)).to.deep.include({
        status: 'printing',
        attempts: 2,
        claimedBy: agentOwner(agentId),
      });
    });

    it('done counts from a lapsed claim; a failure from a claim no longer held changes nothing', async () => {
      const { service, agentId, queue, read } = await setUp();
      const jobId = await queue();
      await service.jobsFor(agentId, 0);
      const failed = await service.report(agentId, jobId, {
        status: 'failed',
        error: { code: 'PRINTER_UNREACHABLE', message: 'off' },
      });
      expect(failed._tag === 'Right' && failed.right.status).to.equal('queued');
      // The same failure again: the job is no longer claimed by the agent, nothing changes.
      const before = await read(jobId);
      const again = await service.report(agentId, jobId, {
        status: 'failed',
        error: { code: 'PRINTER_REFUSED', message: 'late' },
      });
      expect(again._tag === 'Right' && again.right.status).to.equal('queued');
      expect((await read(jobId))._rev).to.equal(before._rev);
      // Claimed again, the lease lapses, and only then the printer's acceptance arrives: done.
      now += 2_000;
      await service.jobsFor(agentId, 0);
      now += LEASE_MS + 1;
      const done = await service.report(agentId, jobId, { status: 'done' });
      expect(done._tag === 'Right' && done.right.status).to.equal('done');
      expect(await read(jobId)).to.deep.include({ status: 'done', claimedBy: null, error: null });
      expect(await service.jobsFor(agentId, 0)).to.deep.equal([]);
    });

    it('a job past its bound after a failed attempt fails instead of being handed out', async () => {
      const { service, agentId, queue, read } = await setUp();
      const jobId = await queue(5_000);
      await service.jobsFor(agentId, 0);
      await service.report(agentId, jobId, {
        status: 'failed',
        error: { code: 'PRINTER_BUSY', message: 'busy' },
      });
      now += 6_000;
      expect(await service.jobsFor(agentId, 0)).to.deep.equal([]);
      expect(await read(jobId)).to.deep.include({
        status: 'failed',
        error: { code: 'PRINTER_BUSY', message: 'busy' },
      });
    });

    it("the server's worker leaves an agent's job alone, and fails it once its bound passed with no agent holding it", async () => {
      const { queue, read, jobs, printers } = await setUp();
      const jobId = await queue(5_000);
      const sent: string[] = [];
      // The worker's look at the printer: once it has read it, its attempt is under way and `stop` waits for it.
      let looked: () => void = () => undefined;
      const lookedAt = () =>
        new Promise<void>((resolve) => {
          looked = resolve;
        });
      const watched = {
        get: async (printerId: string) => {
          const p = await printers.get(printerId);
          looked();
          return p;
        },
      };
      const run = async (): Promise<void> => {
        const seen = lookedAt();
        const worker = printWorker({
          jobs,
          printers: watched,
          content: { contentOf: async () => testLabelsOf('en', 'now') },
          clock,
          sweepMs: 60_000,
          send: async (p: PrinterDoc) => {
            sent.push(p.printerId);
            return { format: 'x', bytes: 1, pages: 1 };
          },
        });
        worker.wake(jobId);
        await seen;
        await worker.stop();
      };
      await run();
      expect(await read(jobId)).to.deep.include({ status: 'queued', attempts: 0 });
      now += 6_000;
      await run();
      const j = await read(jobId);
      expect(j.status).to.equal('failed');
      expect(j.error?.code).to.equal('PRINTER_UNREACHABLE');
      expect(sent).to.deep.equal([]);
    });

    it('a token: the same agent gives the same one; a wrong secret, another form or a revoked agent is refused', async () => {
      const { service, agentId, token } = await setUp();
      const principal = await service.authenticate(token);
      expect(principal).to.deep.include({ printAgentId: agentId, roles: [], authMode: 'agent' });
      expect(await service.authenticate(`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`)).to.equal(
        undefined,
      );
      expect(await service.authenticate('dev-admin-token-0123456789')).to.equal(undefined);
      expect(await service.authenticate(token.replace(agentId, randomUUID()))).to.equal(undefined);
      // An issue retried under the same key (its answer lost, the ledger's copy gone) gives the same token.
      const same = actor();
      const once = await service.issue(same, { name: 'Outra' });
      const twice = await service.issue(same, { name: 'Outra' });
      expect(once._tag === 'Right' && once.right.token).to.be.a('string');
      expect(twice._tag === 'Right' && twice.right.token).to.equal(once._tag === 'Right' && once.right.token);
      const revoked = await service.revoke(agentId);
      expect(revoked._tag).to.equal('Right');
      expect(await service.authenticate(token)).to.equal(undefined);
    });
  });
}
