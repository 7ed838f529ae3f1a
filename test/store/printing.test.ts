/**
 * Printers and print jobs in the store (0051), on each backend: a retried creation meets its own
 * document, every change is a compare-and-swap (so of two workers one claims a job), the worker
 * finds the unfinished jobs through their index, and jobs past their week are purged.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { PRINT_JOB_KEEP_MS, type PrintJobStatus } from '../../src/domain/printing.js';
import { ensureIndexes, indexSpecs } from '../../src/store/indexes.js';
import { printerStore } from '../../src/store/printers.js';
import { type PrintJobFields, printJobStore } from '../../src/store/printJobs.js';
import { withQuorumWrites } from '../../src/store/quorumWrites.js';
import { readUntil } from '../support/readUntil.js';
import { databasePerTest, storeBackends } from '../support/storeBackends.js';

const AT = '2026-11-29T09:00:00.000Z';

const job = (status: PrintJobStatus, createdAt = AT): PrintJobFields => ({
  jobId: randomUUID(),
  printerId: randomUUID(),
  kind: 'labels',
  checkInIds: [randomUUID()],
  status,
  error: null,
  attempts: 0,
  createdAt,
  createdBy: 'u-1',
  updatedAt: createdAt,
  notBefore: createdAt,
  giveUpAt: createdAt,
  claimedBy: null,
  leaseUntil: null,
  sent: null,
});

for (const [name, host] of storeBackends('printing')) {
  describe(`printers and print jobs on ${name}`, () => {
    const per = databasePerTest(host, 'printing');

    it('a creation retried with the same id meets the first; a stale copy cannot claim a job', async () => {
      const jobs = printJobStore(withQuorumWrites(per.db()));
      const fields = job('queued');
      const created = await jobs.create(fields);
      expect(created).to.not.equal('EXISTS');
      expect(await jobs.create(fields)).to.equal('EXISTS');
      if (created === 'EXISTS') return;
      const claim = { ...fields, status: 'printing' as const, claimedBy: 'worker-a', attempts: 1 };
      const claimed = await jobs.update(created, claim);
      expect(claimed).to.not.equal('CONFLICT');
      expect(await jobs.update(created, { ...claim, claimedBy: 'worker-b' }), 'the other worker').to.equal(
        'CONFLICT',
      );
      expect((await jobs.get(fields.jobId))?.claimedBy).to.equal('worker-a');
    });

    it('lists the queued and printing jobs, not the done or failed ones', async () => {
      await ensureIndexes(per.db(), indexSpecs.requests);
      const jobs = printJobStore(per.db());
      const open = [job('queued'), job('printing')];
      for (const j of [...open, job('done'), job('failed')]) await jobs.create(j);
      await per.server().copiesAgree();
      const found = await readUntil(
        () => jobs.unfinished(),
        (l) => l.length === 2,
      );
      expect(found.map((j) => j.jobId).sort()).to.deep.equal(open.map((j) => j.jobId).sort());
    });

    it('purges the jobs whose week has passed and keeps the rest', async () => {
      await ensureIndexes(per.db(), indexSpecs.requests);
      const jobs = printJobStore(per.db());
      const old = job('done', '2026-11-01T09:00:00.000Z');
      const recent = job('done', AT);
      await jobs.create(old);
      await jobs.create(recent);
      await per.server().copiesAgree();
      const removed = await jobs.purgeExpired(new Date(Date.parse(AT) + PRINT_JOB_KEEP_MS - 1));
      expect(removed).to.equal(1);
      expect(await jobs.get(old.jobId)).to.equal(undefined);
      expect(await jobs.get(recent.jobId)).to.not.equal(undefined);
    });

    it('keeps printers by name, changed and removed by compare-and-swap', async () => {
      const printers = printerStore(withQuorumWrites(per.db()));
      const fields = (name: string) => ({
        printerId: randomUUID(),
        name,
        protocol: 'zpl' as const,
        uri: 'tcp://192.0.2.1:9100',
        layout: 'label4x6' as const,
        labelLanguage: 'pt-BR' as const,
        createdAt: AT,
        updatedAt: AT,
      });
      const b = await printers.create(fields('Sala B'));
      await printers.create(fields('Recepção'));
      if (b === 'EXISTS') throw new Error('a fresh id');
      expect((await printers.list()).map((p) => p.name)).to.deep.equal(['Recepção', 'Sala B']);
      const renamed = await printers.update(b, { ...b, name: 'Sala C' });
      expect(renamed).to.not.equal('CONFLICT');
      expect(await printers.remove(b), 'a stale copy').to.equal('CONFLICT');
      if (renamed === 'CONFLICT') return;
      expect(await printers.remove(renamed)).to.equal('REMOVED');
      expect(await printers.get(b.printerId)).to.equal(undefined);
    });
  });
}
