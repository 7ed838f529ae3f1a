/**
 * Two app instances (two child processes) on one CouchDB-protocol server (test/support/couchServer.ts),
 * written to concurrently: offline events of an ADMIN tablet through one instance and of a CHAMADOR
 * tablet through the other, on the same children (so the conflict rule decides between them), the same
 * batch sent to both at once, and REST check-ins and check-outs sent to both at once under one
 * Idempotency-Key.
 *
 * Criteria: once both pipelines are idle, the shared projections equal a one-instance rebuild from the
 * same events (aspects and conflict records), both instances report the same conflicts and attendance,
 * check-in records follow the projections, and there are no duplicate side effects: each event id is
 * stored and projected once, and each Idempotency-Key gives one execution (one event, one check-in
 * record, one audit entry; the other request is a replay of it).
 *
 * On a cluster of three whose nodes this run controls, the third node (neither instance's) is
 * SIGKILLed in the middle of a round and started again two rounds later: the copies of every write
 * are then two, so two instances racing on one document split them more often, and the same criteria
 * hold.
 */
import { randomUUID } from 'node:crypto';
import canonicalize from 'canonicalize';
import { expect } from 'chai';
import * as t from 'io-ts';
import { PouchDB } from '../../src/store/pouch.js';
import { openStore, type Store } from '../../src/store/store.js';
import { figure } from '../reliability/figures.js';
import { type CouchServer, isRealCouch, startCouchServer, untilCopiesAgree } from '../support/couchServer.js';
import { decodeAs, type HttpResult } from '../support/http.js';
import { createdId, SyncAnswer, seedSmallRoster } from '../support/seed.js';
import { snapshot } from '../support/snapshot.js';
import { DEV_TOKENS } from '../support/testService.js';
import {
  type ChildService,
  checkinRecordsOutOfLine,
  childService,
  differingDocs,
  differingId,
  errorCode,
  eventsInAspects,
  eventually,
  get,
  lineage,
  pipelineGauges,
  post,
  projectedCheckins,
  ROW_METRICS_TOKEN,
  rebuildFrom,
  repeats,
  sleep,
  storedEvents,
} from './support.js';

const ROUNDS = 6;
const PER_TABLET = 100;
const KEYED = 8;

/** How many forked aspects an instance's pipeline settled, from its `/metrics` (decision 0038). */
const forksSettledBy = async (url: string): Promise<number> => {
  const r = await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${ROW_METRICS_TOKEN}` } });
  const line = (await r.text())
    .split('\n')
    .find((l) => l.startsWith('chamada_pipeline_forks_settled_total '));
  const n = Number(line?.split(' ')[1]);
  if (r.status !== 200 || !Number.isFinite(n))
    throw new Error(`no fork count at ${url}/metrics (${r.status})`);
  return n;
};
/** On a cluster of three, node 3 dies during this round and comes back two rounds later. */
const KILL_ROUND = 2;

const Page = t.type({ items: t.array(t.unknown), nextCursor: t.union([t.string, t.null]) });
const CheckedIn = t.type({ checkInId: t.string, code: t.string, status: t.string });
const AuditEntry = t.type({
  action: t.string,
  endpoint: t.string,
  subject_id: t.union([t.string, t.null]),
  correlation_id: t.string,
  details: t.UnknownRecord,
});
const StoredEvent = t.type({ type: t.string, subjectId: t.string, payload: t.UnknownRecord });
const ConflictAuditDoc = t.type({
  action: t.literal('CONFLICT_RESOLVED'),
  created_at: t.string,
  correlation_id: t.string,
  details: t.UnknownRecord,
});
const conflictAuditDocs = (docs: ReadonlyArray<unknown>) =>
  docs.flatMap((d) => (ConflictAuditDoc.is(d) ? [d] : []));

/** What reading a report's pages took: the pages, the longest, and the reads answered 503 and sent again. */
interface PagesRead {
  pages: number;
  longestMs: number;
  resent: number;
  /** each read's time and status, in order */
  reads: string[];
}

/**
 * Every page of a keyset-paged report, each read as the office reads it: a 503 `STORE_UNAVAILABLE`
 * (the request's deadline, on a machine the other tenants load) is read again after a pause, as the
 * writes are. Each read's time is kept: a page's cost must not grow with its place in the report.
 */
const allPages = async (base: string, path: string, read: PagesRead): Promise<unknown[]> => {
  const items: unknown[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const url = `${base}${path}${cursor === null ? '' : `${sep}cursor=${encodeURIComponent(cursor)}`}`;
    let r: HttpResult | undefined;
    for (let attempt = 1; ; attempt += 1) {
      const started = Date.now();
      r = await get(url, DEV_TOKENS.DEV_ADMIN_TOKEN);
      const ms = Date.now() - started;
      read.longestMs = Math.max(read.longestMs, ms);
      read.reads.push(`${ms}${r?.status === 200 ? '' : `:${r?.status}`}`);
      if (r?.status !== 503 || errorCode(r) !== 'STORE_UNAVAILABLE' || attempt === 10) break;
      read.resent += 1;
      await sleep(500);
    }
    if (r?.status !== 200) throw new Error(`${path}: ${r?.status} ${r?.text.slice(0, 300)}`);
    read.pages += 1;
    const page = decodeAs(Page, r.json);
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return items;
};

describe('two instances on one CouchDB-protocol server, written to concurrently', function () {
  this.timeout(900_000);
  let couch: CouchServer | undefined;
  const services: ChildService[] = [];
  let shared: Store | undefined;
  after(async () => {
    await shared?.close();
    for (const s of services) await s.dispose();
    await couch?.dispose();
  });

  it('converges on what one instance would project, reports the same, and does every keyed change once', async () => {
    couch = await startCouchServer();
    const env = {
      AUTH_MODE: 'dev',
      ...DEV_TOKENS,
      COUCHDB_URL: couch.url,
      // One deployment: the secrets that sign cursors are the same on both instances.
      JWT_SECRET: 'a-stress-test-jwt-secret-that-is-long-enough-0123456789',
      // To read how many forked aspects each instance settled (decision 0038).
      METRICS_TOKEN: ROW_METRICS_TOKEN,
    };
    const a = await childService({ label: 'inst-a', env });
    services.push(a);
    const urlA = await a.start();
    // On a cluster each instance talks to a node of its own, as behind a load balancer.
    const b = await childService({
      label: 'inst-b',
      env: { ...env, COUCHDB_URL: couch.nodeUrls[1 % couch.nodeUrls.length] ?? couch.url },
    });
    services.push(b);
    const urlB = await b.start();

    const today = new Date().toISOString().slice(0, 10);
    const { classId, sessionId, studentIds } = await seedSmallRoster(
      urlA,
      Array.from({ length: 20 }, (_, i) => `Criança ${i}`),
      today,
    );
    // A second session for the REST check-ins, apart from the synced ones.
    const desk = await createdId(urlA, '/api/v1/sessions', { classId, date: today }, 'sessionId');
    await eventually(
      'instance B sees the children registered through A',
      async () => {
        const r = await get(`${urlB}/api/v1/students?limit=50`);
        return r?.status === 200 && Page.is(r.json) && r.json.items.length === studentIds.length;
      },
      30_000,
    );

    // 1. Offline events: per round an ADMIN tablet syncs through A and a CHAMADOR tablet through B, on
    //    the same children; and one more batch is sent to both at once (the same user resending).
    const sent = new Set<string>();
    const at = (n: number) => new Date(Date.parse(`${today}T08:00:00.000Z`) + n * 1013).toISOString();
    const batch = (round: number, tablet: number) =>
      Array.from({ length: PER_TABLET }, (_, i) => {
        const n = round * 1000 + tablet * PER_TABLET + i;
        const studentId = studentIds[i % studentIds.length] ?? '';
        const eventId = randomUUID();
        sent.add(eventId);
        return i % 10 === 0
          ? {
              eventId,
              type: 'CHECK_IN',
              studentId,
              sessionId,
              checkInId: randomUUID(),
              clientTimestamp: at(n),
            }
          : {
              eventId,
              type: i % 3 === 0 ? 'MARK_ABSENT' : 'MARK_PRESENT',
              studentId,
              sessionId,
              clientTimestamp: at(n),
            };
      });
    // A tablet sends a request again, with the same Idempotency-Key, when it is answered 503 (on a
    // cluster, a write may find no quorum: decision 0023). Never a 500.
    let retriedAfter503 = 0;
    /** `resent` counts the sends of one exchange answered 503 and sent again. */
    const served = async (
      send: () => Promise<HttpResult | undefined>,
      resent?: { count: number },
    ): Promise<HttpResult | undefined> => {
      for (let attempt = 1; ; attempt += 1) {
        const r = await send();
        if (r?.status !== 503 || errorCode(r) !== 'STORE_UNAVAILABLE' || attempt === 20) return r;
        retriedAfter503 += 1;
        if (resent !== undefined) resent.count += 1;
        await sleep(500);
      }
    };
    // Two pipelines on a cluster of three on two cores project far slower than on one node (the first
    // check-in waits for the backlog): the row gives them longer there, and prints how long it took.
    const onCluster = isRealCouch(couch) && couch.nodes > 1;
    const patienceMs = onCluster ? 180_000 : 60_000;
    const postServed = (
      url: string,
      body: unknown,
      token: string,
      key: string = randomUUID(),
      resent?: { count: number },
    ) => served(() => post(url, body, token, key, onCluster ? 120_000 : 30_000), resent);
    // Of the same keyed change sent to both instances, one answer is a replay; both are when a first
    // attempt met its deadline (503, decision 0046), was sent again, and found the final answer the
    // unanswered work left in the ledger: so two replays only where a send was answered 503.
    const oneReplay = (answers: ReadonlyArray<HttpResult | undefined>, resent: { count: number }) => {
      const replays = answers.filter((r) => r?.headers.get('idempotent-replayed') === 'true').length;
      return replays === 1 || (replays === 2 && resent.count > 0)
        ? 'one replay, or two after a resend'
        : `${replays} replays, ${resent.count} sends answered 503 and sent again`;
    };
    const syncOk = (r: HttpResult | undefined, size: number, what: string) => {
      expect(r?.status, `${what}: ${r?.text.slice(0, 300)}`).to.equal(200);
      const answer = decodeAs(SyncAnswer, r?.json);
      expect(answer.failed, what).to.deep.equal([]);
      expect(answer.synced, what).to.have.length(size);
      return answer;
    };
    // Of an event sent to both instances at once, one answer should say "stored" and the other
    // "duplicate" (with the stored serverTimestamp). With a node killed, both "stored" and both
    // "duplicate" have been seen (open defects, reliability.md); the event is stored once all the same
    // (asserted below: none missing, none projected twice), so they are counted in the figure there.
    let bothNew = 0;
    let bothDuplicate = 0;
    let sample: string | undefined;
    // A document no pipeline can read, written straight to the shared events database each round: both
    // pipelines meet it, and it is quarantined and audited once. No guard refuses it (decision 0063),
    // as none would a hand-made document; it has no kind or payload.
    const rawEvents = new PouchDB(`${couch.url}/chamada_events`);
    const cluster = couch;
    const killing =
      isRealCouch(cluster) && cluster.nodes >= 3 && process.env.COUCHDB_TEST_NO_FAULTS === undefined;
    let nodeDownMs = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      // The fault runs beside the round's requests: the node dies while they are in flight.
      const fault =
        !killing || (round !== KILL_ROUND && round !== KILL_ROUND + 2)
          ? Promise.resolve()
          : round === KILL_ROUND
            ? sleep(300).then(async () => {
                await cluster.killNode(3);
                nodeDownMs = -Date.now();
              })
            : sleep(300).then(async () => {
                await cluster.startNode(3);
                nodeDownMs += Date.now();
              });
      await rawEvents.put({
        _id: `event:unreadable-${round}`,
        docType: 'event',
        eventId: `unreadable-${round}`,
      });
      const admin = batch(round, 0);
      const caller = batch(round, 1);
      const both = batch(round, 2);
      const [ra, rb, r1, r2] = await Promise.all([
        postServed(`${urlA}/api/v1/sync/events`, { events: admin }, DEV_TOKENS.DEV_ADMIN_TOKEN),
        postServed(`${urlB}/api/v1/sync/events`, { events: caller }, DEV_TOKENS.DEV_CALLER_TOKEN),
        postServed(`${urlA}/api/v1/sync/events`, { events: both }, DEV_TOKENS.DEV_ADMIN_TOKEN),
        postServed(`${urlB}/api/v1/sync/events`, { events: both }, DEV_TOKENS.DEV_ADMIN_TOKEN),
      ]);
      await fault;
      syncOk(ra, admin.length, `round ${round}, ADMIN through A`);
      syncOk(rb, caller.length, `round ${round}, CHAMADOR through B`);
      const first = syncOk(r1, both.length, `round ${round}, both (A)`);
      const second = syncOk(r2, both.length, `round ${round}, both (B)`);
      // The same events, stored once: every one is new on exactly one side.
      for (const [i, s] of first.synced.entries()) {
        const other = second.synced[i];
        expect(other?.eventId).to.equal(s.eventId);
        if (s.duplicate === other?.duplicate) {
          if (s.duplicate) bothDuplicate += 1;
          else bothNew += 1;
          sample ??= `${JSON.stringify(s)} / ${JSON.stringify(other)}`;
        }
      }
    }

    await rawEvents.close();

    // 2. REST: the same check-in (one Idempotency-Key) sent to both instances at once, then the same
    //    check-out likewise.
    const keyed = studentIds.slice(0, KEYED);
    await Promise.all(
      keyed.map(async (studentId) => {
        const key = randomUUID();
        const body = { sessionId: desk, studentId };
        const inResent = { count: 0 };
        const [x, y] = await Promise.all([
          postServed(`${urlA}/api/v1/check-in`, body, DEV_TOKENS.DEV_CALLER_TOKEN, key, inResent),
          postServed(`${urlB}/api/v1/check-in`, body, DEV_TOKENS.DEV_CALLER_TOKEN, key, inResent),
        ]);
        // An answer missing past the limit: what the pipelines were doing says why.
        const why =
          x?.status === 201 && y?.status === 201
            ? ''
            : `\nA: ${await pipelineGauges(urlA)}; logged: ${a.logSummary()}\nB: ${await pipelineGauges(urlB)}; logged: ${b.logSummary()}`;
        expect(
          [x?.status, y?.status],
          `${x?.text} / ${y?.text}\nA: ${a.errorLines().slice(-3).join('\n')}\nB: ${b.errorLines().slice(-3).join('\n')}${why}`,
        ).to.deep.equal([201, 201]);
        const cx = decodeAs(CheckedIn, x?.json);
        const cy = decodeAs(CheckedIn, y?.json);
        expect(cy.checkInId, 'one check-in for one key').to.equal(cx.checkInId);
        expect(oneReplay([x, y], inResent), 'the check-ins').to.equal('one replay, or two after a resend');
        const outKey = randomUUID();
        const out = { checkInId: cx.checkInId, code: cx.code, pickupPerson: 'G' };
        const outResent = { count: 0 };
        const [ox, oy] = await Promise.all([
          postServed(`${urlA}/api/v1/check-out`, out, DEV_TOKENS.DEV_CALLER_TOKEN, outKey, outResent),
          postServed(`${urlB}/api/v1/check-out`, out, DEV_TOKENS.DEV_CALLER_TOKEN, outKey, outResent),
        ]);
        expect([ox?.status, oy?.status], `${ox?.text} / ${oy?.text}`).to.deep.equal([200, 200]);
        expect(oneReplay([ox, oy], outResent), 'the check-outs').to.equal(
          'one replay, or two after a resend',
        );
      }),
    );

    // Afterwards: wait for both pipelines to go idle on the shared projections, then compare them with
    // one instance's rebuild from the same events.
    shared = await openStore({ kind: 'couchdb', url: couch.url, prefix: 'chamada_' });
    const store = shared;
    const copiesMs = await untilCopiesAgree(couch);
    const events = await storedEvents(
      store,
      [...sent].map((id) => `event:${id}`),
    );
    const rebuilt = await rebuildFrom(events);
    let current: unknown[] = [];
    const settledMs = await eventually(
      'the shared projections equal a one-instance rebuild',
      async () => {
        current = await snapshot(store.db.projections);
        // Key order is CouchDB's to choose (it differs from PouchDB's): compare the values.
        return canonicalize(current) === canonicalize(rebuilt);
      },
      patienceMs,
      500,
    ).catch(() => -1);

    // The pipelines are idle now; what they wrote last (a loser's deletion, a report's record) may be on
    // a quorum and not yet on the copy a range read below is served by: those reads come once the
    // copies agree again.
    await untilCopiesAgree(couch);
    const forksSettled = (await Promise.all([urlA, urlB].map(forksSettledBy))).reduce((x, y) => x + y, 0);
    const reportRead: PagesRead = { pages: 0, longestMs: 0, resent: 0, reads: [] };
    const conflictsA = await allPages(urlA, '/api/v1/reports/conflicts?limit=200', reportRead);
    const conflictsB = await allPages(urlB, '/api/v1/reports/conflicts?limit=200', reportRead);
    const attendanceA = await get(`${urlA}/api/v1/reports/attendance?from=${today}`);
    const attendanceB = await get(`${urlB}/api/v1/reports/attendance?from=${today}`);
    const conflictRecords = rebuilt.filter(
      (d) => typeof d === 'object' && d !== null && '_id' in d && String(d._id).startsWith('conflict:'),
    ).length;

    // Side effects.
    const ours = [...sent];
    const storedIds = new Set(events.map((e) => String(e._id)));
    const missing = ours.filter((id) => !storedIds.has(`event:${id}`));
    const projected = eventsInAspects(current).filter((id) => sent.has(id));
    const restEvents = events.flatMap((e) => {
      const d = StoredEvent.decode(e);
      return d._tag === 'Right' && d.right.payload.sessionId === desk ? [d.right] : [];
    });
    const perStudent = (type: string) =>
      keyed.map((s) => restEvents.filter((e) => e.type === type && e.subjectId === s).length);
    const records = (
      await store.db.private.allDocs({ startkey: 'checkin:', endkey: 'checkin:\ufff0', include_docs: true })
    ).rows.flatMap((r) => {
      const d: unknown = r.doc;
      return t.type({ studentId: t.string, sessionId: t.literal(desk) }).is(d) ? [d.studentId] : [];
    });
    const auditRows = (await store.db.audit.allDocs({ include_docs: true })).rows.map((r) => r.doc);
    const audit = auditRows.flatMap((doc) => {
      const d = AuditEntry.decode(doc);
      return d._tag === 'Right' ? [d.right] : [];
    });
    const executions = (endpoint: string) =>
      keyed.map(
        (s) =>
          audit.filter(
            (e) =>
              e.action === 'MUTATION' &&
              e.endpoint === endpoint &&
              e.subject_id === s &&
              !('replayOf' in e.details),
          ).length,
      );
    const conflictAudits = audit.filter((e) => e.action === 'CONFLICT_RESOLVED');
    const quarantineAudits = audit
      .filter((e) => e.action === 'QUARANTINE')
      .map((e) => String(e.details.docId))
      .sort();
    const withConflicts = (
      await store.db.events.allDocs({ include_docs: true, conflicts: true })
    ).rows.filter((r) => r.doc !== undefined && '_conflicts' in r.doc);
    // Projection documents two pipelines wrote on different copies at once (a write that lost on the
    // quorum can still land on one copy): CouchDB then shows one of the two, whichever it picks.
    const projectionConflicts = (
      await store.db.projections.allDocs({ include_docs: true, conflicts: true })
    ).rows.flatMap((r) => (r.doc !== undefined && '_conflicts' in r.doc ? [r.id] : []));
    const repeatedConflictAudits = repeats(
      conflictAudits.map((e) => JSON.stringify([e.correlation_id, e.details])),
    );
    const outOfLine = await checkinRecordsOutOfLine(store, projectedCheckins(current));
    const once = (counts: number[]) => counts.every((n) => n === 1);
    // A decision audited twice differs in its entries' time (the key holds it): say which copies of
    // its events the two times came from, against the copies stored in the end.
    const repeatedExamples = (() => {
      if (repeatedConflictAudits === 0) return '';
      const byDecision = new Map<string, string[]>();
      const auditDocs = conflictAuditDocs(auditRows);
      for (const d of auditDocs) {
        const key = JSON.stringify([d.correlation_id, d.details]);
        byDecision.set(key, [...(byDecision.get(key) ?? []), d.created_at]);
      }
      const stampOf = new Map(
        events.map((e) => [String(e._id).slice('event:'.length), String(Reflect.get(e, 'serverTimestamp'))]),
      );
      return [...byDecision]
        .filter(([, times]) => times.length > 1)
        .slice(0, 3)
        .map(([key, times]) => {
          const details: unknown = JSON.parse(key)[1];
          const id = (k: string) => String(Reflect.get(Object(details), k));
          return `entries at ${times.sort().join(' & ')}; stored winner ${stampOf.get(id('winnerEventId'))}, loser ${stampOf.get(id('loserEventId'))}`;
        })
        .join(' | ');
    })();

    const both = (msg: string) => `${a.loggedCount(msg)}/${b.loggedCount(msg)}`;
    figure(
      'two instances',
      `${ROUNDS} rounds × (100 ADMIN via A ∥ 100 CHAMADOR via B ∥ 100 to both)` +
        `${isRealCouch(couch) && couch.nodes > 1 ? `, through nodes 1 and 2 of ${couch.nodes}` : ''}` +
        `${killing ? `, node 3 killed in round ${KILL_ROUND} and back ${(nodeDownMs / 1000).toFixed(1)} s later` : ''}: ${sent.size} events, ` +
        `${retriedAfter503} requests sent again after a 503, ` +
        `${missing.length} missing (read once the copies agreed, ${copiesMs} ms), ${repeats(projected)} projected twice, ${withConflicts.length} with conflicting revisions, ${projectionConflicts.length} projection documents with conflicting revisions, ` +
        `${bothNew} of ${ROUNDS * PER_TABLET} sent to both answered "stored" by both and ${bothDuplicate} "duplicate" by both; ` +
        `projections ${settledMs < 0 ? 'DIFFER from' : `equal (after ${settledMs} ms)`} a one-instance rebuild ` +
        `(${rebuilt.length} documents, ${conflictRecords} conflict records); reports on A and B ` +
        `${canonicalize(conflictsA) === canonicalize(conflictsB) && attendanceA?.text === attendanceB?.text ? 'equal' : 'DIFFER'} ` +
        `(${conflictsA.length} conflicts, ${reportRead.pages} pages, the longest read ${reportRead.longestMs} ms, ` +
        `${reportRead.resent} sent again after a 503: ${reportRead.reads.join(' ')} ms); ${KEYED} keyed check-ins and check-outs sent to both: events ` +
        `${perStudent('CHECK_IN').join('')}/${perStudent('CHECK_OUT').join('')}, records ${keyed.map((s) => records.filter((r) => r === s).length).join('')}, ` +
        `audit ${executions('POST /api/v1/check-in').join('')}/${executions('POST /api/v1/check-out').join('')} (1 each expected); ` +
        `${outOfLine.length} check-in records out of line; ${conflictAudits.length} CONFLICT_RESOLVED audit entries ` +
        `(${repeatedConflictAudits} exact repeats; a single instance writes none twice${repeatedExamples === '' ? '' : `: ${repeatedExamples}`}); ` +
        `${quarantineAudits.length} QUARANTINE audit entries for ${ROUNDS} unreadable documents; ` +
        `${forksSettled} forked aspects settled; ` +
        // What held the pipelines (decision 0023): each hold is up to the grace, 15 s.
        `pipelines A/B held for a document's copies ${both('event pipeline waits for the copies of a document')}, ` +
        `withdrew copies left behind ${both('event pipeline withdrew copies of events their writers left behind')}, ` +
        `requests answered at their deadline ${both('request answered 503 at its deadline')}` +
        // What each pipeline was doing when the projections still differed: behind, or idle.
        (settledMs < 0
          ? `; pipelines: A ${await pipelineGauges(urlA)}, B ${await pipelineGauges(urlB)}; ` +
            `A logged: ${a.logSummary()}; B logged: ${b.logSummary()}; ` +
            `differing: ${differingDocs(current, rebuilt).slice(0, 3).join(' | ')}; lineages: ${(
              await Promise.all(
                [...new Set(differingDocs(current, rebuilt).map(differingId))]
                  .slice(0, 6)
                  .map((id) => lineage(store.db.projections, id)),
              )
            ).join(' | ')}`
          : ''),
    );
    expect(missing, 'events not stored').to.deep.equal([]);
    expect(repeats(projected), 'events projected twice').to.equal(0);
    expect(projected, 'every event projected').to.have.length(sent.size);
    expect(withConflicts.length, 'events stored under conflicting revisions').to.equal(0);
    expect(projectionConflicts.slice(0, 12), 'projection documents with conflicting revisions').to.deep.equal(
      [],
    );
    // Without a split (one CouchDB node, express-pouchdb, or a cluster with every node up) the second
    // create is short of its quorum, withdrawn and read back (decision 0023): exactly one creates it.
    if (!killing)
      expect(
        { bothNew, bothDuplicate },
        `events sent to both instances answered alike by both, e.g. ${sample}`,
      ).to.deep.equal({ bothNew: 0, bothDuplicate: 0 });
    const differing = differingDocs(current, rebuilt).map((d) =>
      projectionConflicts.includes(d.slice(0, d.indexOf(': '))) ? `(conflicting revisions) ${d}` : d,
    );
    expect(
      differing.slice(0, 12),
      `documents of the shared projections that differ from a one-instance rebuild (${differing.length}; the first 12)`,
    ).to.deep.equal([]);
    expect(conflictsB, 'conflict reports of A and B').to.deep.equal(conflictsA);
    expect(conflictsA, 'every conflict record reported').to.have.length(conflictRecords);
    expect(attendanceA?.status).to.equal(200);
    expect(attendanceB?.text, 'attendance reports of A and B').to.equal(attendanceA?.text);
    expect(once(perStudent('CHECK_IN')), 'one CHECK_IN event per key').to.equal(true);
    expect(once(perStudent('CHECK_OUT')), 'one CHECK_OUT event per key').to.equal(true);
    expect(
      once(keyed.map((s) => records.filter((r) => r === s).length)),
      'one check-in record per key',
    ).to.equal(true);
    expect(once(executions('POST /api/v1/check-in')), 'one audited check-in per key').to.equal(true);
    expect(once(executions('POST /api/v1/check-out')), 'one audited check-out per key').to.equal(true);
    expect(outOfLine, 'check-in records out of line with the projections').to.deep.equal([]);
    expect(repeatedConflictAudits, 'CONFLICT_RESOLVED audit entries written twice for one decision').to.equal(
      0,
    );
    expect(quarantineAudits, 'one QUARANTINE audit entry per unreadable document').to.deep.equal(
      Array.from({ length: ROUNDS }, (_, round) => `event:unreadable-${round}`).sort(),
    );
    expect(a.running() && b.running(), 'both instances up').to.equal(true);
  });
});
