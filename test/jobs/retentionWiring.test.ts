/**
 * The retention job as the service wires it (decision 0045): each run counted in the metrics, logged
 * and audited with its counts only; a failed run the same, and the next one still runs; a stop tells
 * the run under way to stop at the end of its step, and waits for it.
 */
import { expect } from 'chai';
import type { RetentionCounts } from '../../src/domain/retention.js';
import { disposers } from '../../src/lib/disposers.js';
import { prometheusMetrics } from '../../src/metrics/metrics.js';
import { RETENTION_JOB_ENDPOINT, wireRetention } from '../../src/wiring/jobs.js';
import { capturingLogger, recordingAudit } from '../support/jobWiring.js';
import { parseExposition, sampleSum } from '../support/prometheus.js';

const counts = (n: number): RetentionCounts => ({
  studentsAnonymised: n,
  photosErased: 0,
  checkInsDeleted: 2 * n,
  marksDeleted: 0,
  pagesDeleted: 0,
  auditEntriesAnonymised: 0,
  idempotencyRecordsDeleted: 0,
});

const until = async (what: () => boolean, ms: number): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
};

const harness = () => {
  const { entries, audit } = recordingAudit();
  const { logged, logger } = capturingLogger();
  const metrics = prometheusMetrics({ clock: () => new Date() });
  return { entries, audit, logged, logger, metrics, opened: disposers() };
};

describe('retention job wiring', () => {
  it('audits, logs and counts each run; a failed one too, and the next run still happens', async () => {
    const h = harness();
    let attempts = 0;
    wireRetention(
      { clock: () => new Date(), logger: h.logger, metrics: h.metrics, opened: h.opened },
      {
        run: async () => {
          attempts += 1;
          if (attempts === 1) throw new TypeError('the store went away');
          return counts(attempts);
        },
        nextAt: (now) => new Date(now.getTime() + 20),
      },
      h.audit,
    );
    try {
      await until(() => h.entries.length >= 3, 10_000);
    } finally {
      await h.opened.disposeAll();
    }
    expect(h.entries.slice(0, 3).map((e) => [e.endpoint, e.outcome, e.action, e.subject_id])).to.deep.equal([
      [RETENTION_JOB_ENDPOINT, 'FAILURE', 'MUTATION', null],
      [RETENTION_JOB_ENDPOINT, 'SUCCESS', 'MUTATION', null],
      [RETENTION_JOB_ENDPOINT, 'SUCCESS', 'MUTATION', null],
    ]);
    expect(h.entries[0]?.details).to.deep.equal({ errorName: 'TypeError' });
    expect(h.entries[1]?.details).to.deep.equal(counts(2));
    const samples = parseExposition(await h.metrics.scrape());
    expect(sampleSum(samples, 'chamada_retention_failures_total')).to.equal(1);
    expect(sampleSum(samples, 'chamada_retention_last_success_timestamp_seconds')).to.be.greaterThan(0);
    // Every run's counts, added up by kind: as many as ran before the stop.
    const anonymised = h.entries.reduce((n, e) => n + Number(e.details.studentsAnonymised ?? 0), 0);
    expect(anonymised).to.be.greaterThanOrEqual(5);
    expect(sampleSum(samples, 'chamada_retention_ended_total', { kind: 'students_anonymised' })).to.equal(
      anonymised,
    );
    expect(sampleSum(samples, 'chamada_retention_ended_total', { kind: 'check_ins_deleted' })).to.equal(
      2 * anonymised,
    );
    expect(h.logged.join('')).to.contain('retention run failed').and.to.contain('retention run done');
    // Never the message of the error: it may quote data.
    expect(h.logged.join('')).not.to.contain('the store went away');
  });

  it('a stop tells the run under way to stop between its steps, and waits for it', async () => {
    const h = harness();
    let sawStop = false;
    let ended = false;
    wireRetention(
      { clock: () => new Date(), logger: h.logger, metrics: h.metrics, opened: h.opened },
      {
        run: async (signal) => {
          // A run whose steps go on until it is told to stop.
          while (!signal.aborted) await new Promise((r) => setTimeout(r, 5));
          sawStop = true;
          await new Promise((r) => setTimeout(r, 30));
          ended = true;
          throw new Error('stopped');
        },
        nextAt: (now) => new Date(now.getTime() + 60_000),
      },
      h.audit,
    );
    await new Promise((r) => setTimeout(r, 30));
    await h.opened.disposeAll();
    expect([sawStop, ended]).to.deep.equal([true, true]);
    // A run cut short by the stop leaves no entry: the next start runs again.
    expect(h.entries).to.deep.equal([]);
  });
});
