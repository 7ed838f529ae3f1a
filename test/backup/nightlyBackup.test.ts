/**
 * The service's own backups (decision 0044): a service whose clock is a second before BACKUP_AT writes
 * its backup into BACKUP_DIR, removes what is older than BACKUP_KEEP_DAYS and nothing else, audits
 * the run and sets its metric; a failed run is logged, counted and audited, and the next one runs.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { runServiceBackup, stampedName } from '../../src/backup/backupFiles.js';
import { verifyBackup } from '../../src/backup/restore.js';
import { disposers } from '../../src/lib/disposers.js';
import { noMetrics } from '../../src/metrics/metrics.js';
import { BACKUP_JOB_ENDPOINT, wireBackups } from '../../src/wiring/jobs.js';
import { call } from '../support/http.js';
import { capturingLogger, recordingAudit } from '../support/jobWiring.js';
import { parseExposition, sampleSum } from '../support/prometheus.js';
import { seedSmallRoster } from '../support/seed.js';
import { tempDirs } from '../support/tempDir.js';
import { authHeaders, DEV_TOKENS, startTestService } from '../support/testService.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const METRICS_TOKEN = 'metrics-token-for-the-backup-test-0123456789';

const until = async (what: () => Promise<boolean>, ms: number): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe('the service backs itself up (BACKUP_DIR)', function () {
  this.timeout(120_000);
  const { fresh, removeAll } = tempDirs();
  after(removeAll);

  it('at BACKUP_AT writes a whole backup, keeps BACKUP_KEEP_DAYS of them, audits the run and sets the metric', async () => {
    const dir = await fresh('nightly');
    // The service's clock reads 02:29:57 UTC the first time it is read and runs on from there: the run
    // comes three seconds later, once the roster is seeded. Anchored at the first read, not before the
    // start, as opening the store can take longer than three seconds on a busy machine, and a schedule
    // asked after 02:30 is tomorrow's (the CI on record failed so).
    const first = Date.parse('2026-11-28T02:29:57.000Z');
    let offset: number | undefined;
    const clock = (): Date => {
      offset ??= first - Date.now();
      return new Date(Date.now() + offset);
    };
    const old = stampedName(new Date(first - 20 * DAY_MS));
    const recent = stampedName(new Date(first - 3 * DAY_MS));
    const leftover = `${stampedName(new Date(first - DAY_MS))}.partial`;
    await mkdir(dir, { recursive: true });
    for (const name of [old, recent, leftover, 'notes.txt']) await writeFile(join(dir, name), 'x');
    const svc = await startTestService({
      clock,
      env: {
        BACKUP_DIR: dir,
        BACKUP_AT: '02:30',
        BACKUP_TIME_ZONE: 'UTC',
        BACKUP_KEEP_DAYS: '14',
        METRICS_TOKEN,
      },
    });
    try {
      await seedSmallRoster(svc.url, ['Ana']);
      const written = 'chamada-20261128T023000Z.ndjson.gz';
      await until(async () => (await readdir(dir)).includes(written), 30_000);
      // The run removes the old backup and the leftover one after the other: both, before the listing.
      await until(async () => {
        const names = await readdir(dir);
        return !names.includes(old) && !names.includes(leftover);
      }, 5_000);
      expect((await readdir(dir)).sort()).to.deep.equal([written, recent, 'notes.txt'].sort());
      const contents = await verifyBackup(join(dir, written));
      expect([...contents.documents.keys()]).to.deep.equal([
        'audit',
        'private',
        'roster',
        'projections',
        'events',
      ]);
      expect(contents.documents.get('events')).to.be.greaterThan(0);

      await svc.deps.audit.flush();
      const log = await call(
        `${svc.url}/api/v1/audit-logs?endpoint=${encodeURIComponent(BACKUP_JOB_ENDPOINT)}`,
        { headers: authHeaders(DEV_TOKENS.DEV_ADMIN_TOKEN) },
      );
      expect(log.status, log.text).to.equal(200);
      expect(log.text).to.contain('"action":"EXPORT"').and.to.contain('"outcome":"SUCCESS"');
      expect(log.text).to.contain(written);
      const scrape = await fetch(`${svc.url}/metrics`, {
        headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
      });
      const samples = parseExposition(await scrape.text());
      expect(sampleSum(samples, 'chamada_backup_last_success_timestamp_seconds')).to.be.at.least(
        Date.parse('2026-11-28T02:30:00.000Z') / 1000,
      );
      expect(sampleSum(samples, 'chamada_backup_failures_total')).to.equal(0);
    } finally {
      await svc.dispose();
    }
  });

  it('a run that fails half-way leaves no file and deletes no older backup', async () => {
    const dir = await fresh('nightly-failed');
    const now = new Date('2026-11-28T02:30:00.000Z');
    const old = stampedName(new Date(now.getTime() - 30 * DAY_MS));
    await writeFile(join(dir, old), 'x');
    const failing = () =>
      Readable.from(
        (async function* () {
          yield '{"kind":"header"}\n';
          throw new Error('store went away');
        })(),
      );
    let failure: unknown;
    await runServiceBackup({ dir, keepDays: 14, source: failing, now }).catch((e: unknown) => {
      failure = e;
    });
    expect(failure).to.be.instanceOf(Error);
    expect(await readdir(dir)).to.deep.equal([old]);
  });

  it('a failed run is counted, logged and audited, and the next scheduled run still happens', async () => {
    const runs: Array<'ok' | 'failed'> = [];
    const { entries, audit } = recordingAudit();
    const { logged, logger } = capturingLogger();
    const opened = disposers();
    let attempts = 0;
    wireBackups(
      {
        clock: () => new Date(),
        logger,
        metrics: { ...noMetrics, backupRun: (r) => runs.push(r.ok ? 'ok' : 'failed') },
        opened,
      },
      {
        run: async () => {
          attempts += 1;
          if (attempts === 1) throw Object.assign(new Error('no space left'), { code: 'ENOSPC' });
          return { file: 'chamada-x.ndjson.gz', bytes: 10, removed: [] };
        },
        nextAt: (now) => new Date(now.getTime() + 20),
      },
      audit,
    );
    try {
      await until(async () => runs.length >= 2, 10_000);
    } finally {
      await opened.disposeAll();
    }
    expect(runs.slice(0, 2)).to.deep.equal(['failed', 'ok']);
    expect(entries.slice(0, 2).map((e) => [e.endpoint, e.outcome, e.action])).to.deep.equal([
      [BACKUP_JOB_ENDPOINT, 'FAILURE', 'EXPORT'],
      [BACKUP_JOB_ENDPOINT, 'SUCCESS', 'EXPORT'],
    ]);
    expect(logged.join('')).to.contain('service backup failed; retrying at the next scheduled time');
    expect(logged.join('')).not.to.contain('no space left');
  });
});
