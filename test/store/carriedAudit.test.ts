/**
 * Audit entries that ride in the idempotency ledger's records (decision 0041), on a real embedded
 * store: the records written through the exclusive ledger, the entries read back from the real log.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import type { AuditLog, CarriedAuditEntry, NewAuditEntry } from '../../src/domain/audit.js';
import type { ClaimRequest, IdempotencyLedger } from '../../src/domain/idempotencyRecord.js';
import { auditLog } from '../../src/store/auditLog.js';
import { CHECKPOINT_ID, carriedAuditTrail } from '../../src/store/carriedAudit.js';
import { exclusiveIdempotencyLedger } from '../../src/store/idempotencyLedger.js';
import { openStore, type Store } from '../../src/store/store.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

const entry = (n: number): NewAuditEntry => ({
  correlation_id: randomUUID(),
  actor_user_id: 'user-1',
  actor_role: 'ADMIN',
  endpoint: 'POST /api/v1/students',
  outcome: 'SUCCESS',
  details: { status: 201, n },
  subject_id: `student-${n}`,
  action: 'MUTATION',
});

describe('audit entries carried by the ledger’s records (embedded store)', function () {
  this.timeout(30_000);
  let dir: string;
  let store: Store;
  let log: AuditLog;
  let ledger: IdempotencyLedger;

  beforeEach(async () => {
    dir = await makeTempDir('carried-audit');
    store = await openStore({ kind: 'embedded', dataDir: dir, prefix: '' });
    log = auditLog(store.db.audit, { clock: () => new Date() });
    ledger = exclusiveIdempotencyLedger(store.db.requests);
  });
  afterEach(async () => {
    await log.close();
    await store.close();
    await removeDir(dir);
  });

  /** A keyed mutation's record, with its entry carried when `carried` is given. */
  const record = async (n: number, carried?: (auditId: string) => CarriedAuditEntry) => {
    const request: ClaimRequest = {
      key: randomUUID(),
      principalId: 'user-1',
      fingerprint: `f${n}`,
      now: Date.now(),
      leaseMs: 60_000,
      retentionMs: 86_400_000,
    };
    const claim = await ledger.claim(request);
    if (claim === undefined) throw new Error('claim refused');
    const audit = carried?.(claim.claimId);
    const response = {
      status: 201,
      headers: {},
      contentType: 'application/json',
      body: '{}',
      correlationId: randomUUID(),
    };
    expect(await ledger.complete(claim, request, response, Date.now(), audit)).to.equal(true);
    return audit;
  };
  const carriedOf =
    (n: number) =>
    (auditId: string): CarriedAuditEntry => ({
      at: new Date(Date.UTC(2026, 10, 28, 12, 0, n)).toISOString(),
      auditId,
      entry: entry(n),
    });
  const logged = async () => {
    const page = await log.query({ limit: 200 });
    if (E.isLeft(page)) throw new Error('no page');
    return page.right.items;
  };

  it('appends a carried entry under the time and id its record holds, once the record is stored', async () => {
    const trail = carriedAuditTrail({ requests: store.db.requests, audit: log });
    let carried: CarriedAuditEntry | undefined;
    await record(1, (auditId) => {
      carried = carriedOf(1)(auditId);
      return carried;
    });
    if (carried === undefined) throw new Error('nothing carried');
    await trail.carry(carried).stored();
    const items = await logged();
    expect(items).to.have.length(1);
    expect(items[0]).to.deep.include({
      audit_id: carried.auditId,
      created_at: carried.at,
      subject_id: 'student-1',
    });
    expect(trail.backlog()).to.deep.include({ entries: 0, failing: false });
  });

  it('appends at a start what records carried that never reached the log, once each', async () => {
    const lost = [await record(1, carriedOf(1)), await record(2, carriedOf(2))];
    // A record of an earlier release, with no entry in it, is passed over.
    await record(3);
    expect(await logged(), 'nothing reached the log (the process stopped first)').to.be.empty;
    const first = carriedAuditTrail({ requests: store.db.requests, audit: log });
    expect(await first.tick()).to.equal(true);
    const after = await logged();
    expect(after.map((e) => e.audit_id).sort()).to.deep.equal(lost.map((c) => c?.auditId).sort());
    // A later start, and another tick, append nothing again: the checkpoint has moved past them.
    const second = carriedAuditTrail({ requests: store.db.requests, audit: log });
    expect(await second.tick()).to.equal(true);
    expect(await second.tick()).to.equal(true);
    expect(await logged()).to.have.length(2);
    const checkpoint: unknown = await store.db.requests.get(CHECKPOINT_ID);
    expect(checkpoint).to.have.property('seq', (await store.db.requests.info()).update_seq);
  });

  it('keeps the checkpoint while an append fails, and appends the entry once the log takes it again', async () => {
    let refuse = true;
    const flaky: Pick<AuditLog, 'appendKeyed'> = {
      appendKeyed: (e, key) =>
        refuse ? Promise.reject(new Error('audit database full')) : log.appendKeyed(e, key),
    };
    const failures: unknown[] = [];
    const trail = carriedAuditTrail({
      requests: store.db.requests,
      audit: flaky,
      onAppendFailure: (e) => failures.push(e),
    });
    expect(await trail.tick(), 'an empty ledger: the checkpoint moves').to.equal(true);
    const carried = await record(1, carriedOf(1));
    if (carried === undefined) throw new Error('nothing carried');
    await trail.carry(carried).stored();
    expect(await trail.tick(), 'the entry did not reach the log').to.equal(false);
    expect(trail.backlog().failing).to.equal(true);
    expect(failures).to.have.length.at.least(2);
    expect(await logged()).to.be.empty;
    refuse = false;
    expect(await trail.tick()).to.equal(true);
    expect((await logged()).map((e) => e.audit_id)).to.deep.equal([carried.auditId]);
    expect(trail.backlog()).to.deep.include({ entries: 0, failing: false });
  });

  it('moves the checkpoint only past entries that reached the log, waiting for those on their way', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const slow: Pick<AuditLog, 'appendKeyed'> = {
      appendKeyed: async (e, key) => {
        await held;
        return log.appendKeyed(e, key);
      },
    };
    const trail = carriedAuditTrail({ requests: store.db.requests, audit: slow });
    const carried = await record(1, carriedOf(1));
    if (carried === undefined) throw new Error('nothing carried');
    const first = trail.tick();
    await trail.carry(carried).stored();
    expect(trail.backlog().entries).to.equal(1);
    let moved = false;
    const second = trail.tick().then((ok) => {
      moved = ok;
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(moved, 'the checkpoint waits for the entry on its way').to.equal(false);
    release();
    await Promise.all([first, second]);
    expect(moved).to.equal(true);
    expect(await logged()).to.have.length(1);
  });

  it('makes an answer wait for its own entry once too many are on their way', async () => {
    const releases: Array<() => void> = [];
    const slow: Pick<AuditLog, 'appendKeyed'> = {
      appendKeyed: (e, key) =>
        new Promise<void>((resolve, reject) => {
          releases.push(() => log.appendKeyed(e, key).then(resolve, reject));
        }),
    };
    const trail = carriedAuditTrail({ requests: store.db.requests, audit: slow, maxBacklog: 2 });
    const answered: number[] = [];
    const answers = [1, 2, 3].map((n) =>
      trail
        .carry({ at: new Date().toISOString(), auditId: randomUUID(), entry: entry(n) })
        .stored()
        .then(() => answered.push(n)),
    );
    await new Promise((r) => setTimeout(r, 50));
    expect(answered.sort(), 'two within the bound answer at once; the third waits').to.deep.equal([1, 2]);
    expect(trail.backlog().entries).to.equal(3);
    for (const r of releases) r();
    await Promise.all(answers);
    expect(answered).to.have.length(3);
    expect(trail.backlog().entries).to.equal(0);
  });

  it('counts a dropped entry (its record not stored) as settled: the caller writes it', async () => {
    const trail = carriedAuditTrail({ requests: store.db.requests, audit: log });
    trail.carry({ at: new Date().toISOString(), auditId: randomUUID(), entry: entry(1) }).dropped();
    expect(trail.backlog().entries).to.equal(0);
    expect(await trail.tick()).to.equal(true);
    expect(await logged()).to.be.empty;
  });
});
