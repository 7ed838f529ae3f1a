/**
 * Store unavailable: the service runs on a CouchDB server (express-pouchdb under `npm run
 * test:stress`, a real CouchDB under `npm run test:couchdb`) that is stopped in the middle of a mixed
 * load and restarted a few seconds later, while the service process keeps running. On a real CouchDB
 * the same row runs a second time with the node frozen (SIGSTOP) for 12 s instead: a stall, where
 * sockets stay open and nothing answers.
 *
 * Criteria: during the outage every answer is a 2xx the service could give without the store, or 503
 * STORE_UNAVAILABLE in the error envelope (never a 500, a hang or a dropped connection); health answers
 * 503; the process does not exit; once the server is back the same process serves every request again,
 * and a write it acknowledged during the outage (if any) is stored. Every request of every row, the
 * ones that straddle the fault's start or end included, is answered within REQUEST_DEADLINE_MS and a
 * little slack (decision 0046), with the service's own defaults (a 6 s deadline, a 5 s store timeout):
 * a stall of 12 s holds none for longer. Afterwards, in every row: no write
 * acknowledged at any time is lost (events synced, check-ins and check-outs answered 2xx), nothing
 * took effect twice (an event in two aspects, a conflicting revision left on an event, a check-in
 * record out of line), and the projections equal a rebuild from the stored events.
 */
import canonicalize from 'canonicalize';
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { ErrorEnvelope } from '../../src/domain/errors.js';
import { openStore } from '../../src/store/store.js';
import { figure } from '../reliability/figures.js';
import {
  type CouchServer,
  isRealCouch,
  onRealCouch,
  type RealCouchServer,
  realCouchNodes,
  startCouchServer,
  untilCopiesAgree,
} from '../support/couchServer.js';
import type { HttpResult } from '../support/http.js';
import { seedSmallRoster } from '../support/seed.js';
import { snapshot } from '../support/snapshot.js';
import { DEV_TOKENS } from '../support/testService.js';
import {
  type ChildService,
  checkinRecordsOutOfLine,
  childService,
  differingDocs,
  differingId,
  eventsInAspects,
  eventually,
  get,
  lanes,
  lineage,
  marks,
  missingEvents,
  pipelineGauges,
  post,
  projectedCheckins,
  ROW_METRICS_TOKEN,
  rebuildFrom,
  repeats,
  sleep,
  storedEvents,
  Tally,
  tryCall,
} from './support.js';

const BEFORE_MS = 3000;
// The service's default, given explicitly so that the bound asserted below is the one it runs with.
const DEADLINE_MS = 6_000;
// The deadline counts from the request's arrival; the client adds its connection and a busy machine.
const DEADLINE_SLACK_MS = 1_500;
// The issue's "whole cluster down for 10 s and back"; a killed node stays away as long.
const OUTAGE_MS = 10_000;
const AFTER_MS = 4000;
const LANES = 4;

const Synced = t.type({ synced: t.array(t.type({ eventId: t.string, duplicate: t.boolean })) });
const CheckedIn = t.type({ checkInId: t.string, code: t.string });

/** 503 with the contract's envelope and code STORE_UNAVAILABLE. */
const isStoreUnavailable = (r: HttpResult): boolean => {
  const decoded = ErrorEnvelope.decode(r.json);
  return r.status === 503 && E.isRight(decoded) && decoded.right.error.code === 'STORE_UNAVAILABLE';
};

type Window = 'before' | 'transition' | 'outage' | 'after';

/** How the store goes away and comes back: stopped (every node killed), or frozen (SIGSTOP). */
interface Fault {
  readonly title: string;
  readonly name: string;
  readonly env: Record<string, string>;
  /** How long the store stays away. */
  readonly ms: number;
  /** Health may answer 200 meanwhile: the store still works, with fewer copies. */
  readonly healthMayStayUp?: boolean;
  begin(server: CouchServer): Promise<void>;
  end(server: CouchServer): Promise<void>;
}

const stopped: Fault = {
  title: 'store unavailable: the CouchDB server stops mid-load and comes back',
  name: 'store unavailable',
  env: {},
  ms: OUTAGE_MS,
  begin: (server) => server.stop(),
  end: (server) => server.restart(),
};

/** The faults below act on nodes: only a real CouchDB has them. */
const real = (server: CouchServer): RealCouchServer => {
  if (!isRealCouch(server)) throw new Error('this fault needs a real CouchDB (npm run test:couchdb)');
  return server;
};

// The service's node is frozen: its sockets stay open and nothing answers, as in a disk stall or a
// long pause. No request may wait for the 12 s the node is away: each ends by its deadline. The
// service's own store timeout (5 s) is kept: before the deadline, a request making several store
// calls waited several of them (12.4 s, twice, in this row).
const FREEZE_MS = 12_000;
const frozen: Fault = {
  title: 'store stalled: the CouchDB node the service talks to is frozen mid-load for 12 s',
  name: 'store stalled',
  env: {},
  ms: FREEZE_MS,
  begin: (server) => real(server).freezeNode(1),
  end: (server) => real(server).thawNode(1),
};

// A node of three that the service does not talk to is SIGKILLed and started again: the other two
// still make the quorum, so requests go on being served (a 503 is allowed, a 500 never).
const killed: Fault = {
  title: 'store degraded: a CouchDB node of three dies mid-load and comes back',
  name: 'store node killed',
  env: {},
  ms: OUTAGE_MS,
  healthMayStayUp: true,
  begin: (server) => real(server).killNode(2),
  end: (server) => real(server).startNode(2),
};

// Freezing or killing a node needs a real CouchDB whose nodes this run started (npm run test:couchdb).
const controlled = onRealCouch() && process.env.COUCHDB_TEST_NO_FAULTS === undefined;
const faults = controlled ? [stopped, frozen, ...(realCouchNodes() >= 3 ? [killed] : [])] : [stopped];

/**
 * What the store holds once the service has caught up after the fault, read straight from the
 * server: its projections (waiting, bounded, until they equal a rebuild from the stored events and no
 * event is left with conflicting copies: on a cluster the pipeline settles those), and what took
 * effect twice.
 */
const afterTheFault = async (couch: CouchServer) => {
  const store = await openStore({ kind: 'couchdb', url: couch.url, prefix: 'chamada_' });
  try {
    const copiesMs = await untilCopiesAgree(couch);
    const events = await storedEvents(store);
    const rebuilt = await rebuildFrom(events);
    let projections: unknown[] = [];
    let withConflicts = 0;
    let outOfLine: string[] = [];
    const settledMs = await eventually(
      'the projections equal a rebuild, no event has conflicting copies, the check-in records follow',
      async () => {
        projections = await snapshot(store.db.projections);
        withConflicts = (await store.db.events.allDocs({ include_docs: true, conflicts: true })).rows.filter(
          (r) => r.doc !== undefined && '_conflicts' in r.doc,
        ).length;
        outOfLine = await checkinRecordsOutOfLine(store, projectedCheckins(projections));
        // Key order is the server's to choose: compare the values.
        return (
          withConflicts === 0 && outOfLine.length === 0 && canonicalize(projections) === canonicalize(rebuilt)
        );
      },
      60_000,
      500,
    ).catch(() => -1);
    const differing = differingDocs(projections, rebuilt);
    const lineages = await Promise.all(
      [...new Set(differing.map(differingId))].slice(0, 6).map((id) => lineage(store.db.projections, id)),
    );
    return {
      lineages,
      events: events.length,
      projections,
      differing,
      settledMs,
      withConflicts,
      twice: repeats(eventsInAspects(projections)),
      outOfLine,
      copiesMs,
    };
  } finally {
    await store.close();
  }
};

for (const fault of faults)
  describe(fault.title, function () {
    this.timeout(180_000);
    let couch: CouchServer | undefined;
    let svc: ChildService | undefined;
    after(async () => {
      await svc?.dispose();
      await couch?.dispose();
    });

    it('answers 503 in the envelope during the outage, health reports it, no crash, and recovers without a restart', async () => {
      couch = await startCouchServer();
      const server = couch;
      svc = await childService({
        label: 'outage',
        env: {
          AUTH_MODE: 'dev',
          ...DEV_TOKENS,
          COUCHDB_URL: server.url,
          METRICS_TOKEN: ROW_METRICS_TOKEN,
          REQUEST_DEADLINE_MS: String(DEADLINE_MS),
          ...fault.env,
        },
      });
      const service = svc;
      const url = await service.start();
      const { sessionId, studentIds } = await seedSmallRoster(
        url,
        Array.from({ length: 24 }, (_, i) => `Criança ${i}`),
        new Date().toISOString().slice(0, 10),
      );

      // The window a request belongs to: sent after the stop completed and answered before the restart
      // began is "outage"; one that straddles a boundary is "transition" and only counted.
      let phase: 'before' | 'stopping' | 'down' | 'restarting' | 'up' = 'before';
      let outageStartedAt = 0;
      const windowOf = (sentIn: typeof phase): Window => {
        if (sentIn === 'before' && phase === 'before') return 'before';
        if (sentIn === 'down' && phase === 'down') return 'outage';
        if (sentIn === 'up') return 'after';
        return 'transition';
      };
      const tallies: Record<Window, Tally> = {
        before: new Tally(),
        transition: new Tally(),
        outage: new Tally(),
        after: new Tally(),
      };
      const violations: string[] = [];
      const acknowledgedInOutage: string[] = [];
      // Every write acknowledged in any window: it must be stored and take effect once.
      const acknowledgedEvents: string[] = [];
      const checkedIn = new Set<string>();
      const checkedOut = new Set<string>();
      // The longest a request sent during the outage took to be answered.
      let longestInOutageMs = 0;
      // The longest any request of the row took, whenever it was sent and answered: the ones that
      // wait longest are sent just before the fault or straddle the store's return, which the
      // outage window leaves out. The deadline (REQUEST_DEADLINE_MS) is the bound on every one.
      const longest = { ms: 0, label: '', sentIn: '' };
      const took = (label: string, sentIn: typeof phase, sentAt: number) => {
        const ms = Date.now() - sentAt;
        if (ms > longest.ms) Object.assign(longest, { ms, label, sentIn });
      };
      const judge = (label: string, sentIn: typeof phase, r: HttpResult | undefined, sentAt: number) => {
        const window = windowOf(sentIn);
        took(label, sentIn, sentAt);
        if (window === 'outage') longestInOutageMs = Math.max(longestInOutageMs, Date.now() - sentAt);
        tallies[window].add(label, r);
        const ok = r !== undefined && r.status >= 200 && r.status < 300;
        if (window === 'outage' && !ok && (r === undefined || !isStoreUnavailable(r)))
          violations.push(
            `outage: ${label} ${r === undefined ? 'no answer' : `${r.status} ${r.text.slice(0, 120)}`}`,
          );
        if ((window === 'before' || window === 'after') && !ok)
          violations.push(
            `${window}: ${label} ${r === undefined ? 'no answer' : `${r.status} ${r.text.slice(0, 120)}`}`,
          );
      };

      const open = new Map<string, { checkInId: string; code: string }>();
      const uncertain = new Set<string>();
      const step = async (lane: number, i: number) => {
        const sentIn = phase;
        const sentAt = Date.now();
        const mine = studentIds.filter((_, k) => k % LANES === lane);
        const studentId = mine[i % mine.length] ?? '';
        switch (i % 5) {
          case 0: {
            judge('students', sentIn, await get(`${url}/api/v1/students?limit=20`), sentAt);
            return;
          }
          case 1: {
            const r = await post(`${url}/api/v1/sync/events`, {
              events: marks(10, studentIds, sessionId, i),
            });
            judge('sync', sentIn, r, sentAt);
            if (r?.status === 200 && Synced.is(r.json)) {
              const ids = r.json.synced.map((s) => s.eventId);
              acknowledgedEvents.push(...ids);
              if (windowOf(sentIn) === 'outage') acknowledgedInOutage.push(...ids);
            }
            return;
          }
          case 2:
          case 3: {
            // A check-in or check-out answered 503 is "recorded but not applied yet" and applies once the
            // store is back; the next request on that child may then meet it (409), which is right.
            const held = open.get(studentId);
            const unsure = uncertain.has(studentId);
            if (held === undefined) {
              const r = await post(
                `${url}/api/v1/check-in`,
                { sessionId, studentId },
                DEV_TOKENS.DEV_CALLER_TOKEN,
              );
              if (r?.status === 409 && unsure) {
                took('check-in (an earlier one applied)', sentIn, sentAt);
                tallies[windowOf(sentIn)].add('check-in (an earlier one applied)', r);
                const active = await get(
                  `${url}/api/v1/check-in/active?studentId=${studentId}&sessionId=${sessionId}`,
                  DEV_TOKENS.DEV_CALLER_TOKEN,
                );
                const found = t.type({ checkIn: CheckedIn }).decode(active?.json);
                if (E.isRight(found)) open.set(studentId, found.right.checkIn);
                uncertain.delete(studentId);
                return;
              }
              judge('check-in', sentIn, r, sentAt);
              if (r?.status === 201 && CheckedIn.is(r.json)) {
                open.set(studentId, { checkInId: r.json.checkInId, code: r.json.code });
                checkedIn.add(r.json.checkInId);
                uncertain.delete(studentId);
              } else uncertain.add(studentId);
            } else {
              const r = await post(
                `${url}/api/v1/check-out`,
                { checkInId: held.checkInId, code: held.code, pickupPerson: 'G' },
                DEV_TOKENS.DEV_CALLER_TOKEN,
              );
              if (r?.status === 409 && unsure) {
                took('check-out (an earlier one applied)', sentIn, sentAt);
                tallies[windowOf(sentIn)].add('check-out (an earlier one applied)', r);
                open.delete(studentId);
                uncertain.delete(studentId);
                return;
              }
              judge('check-out', sentIn, r, sentAt);
              if (r?.status === 200) {
                checkedOut.add(held.checkInId);
                open.delete(studentId);
                uncertain.delete(studentId);
              } else uncertain.add(studentId);
            }
            return;
          }
          default:
            judge('health', sentIn, await tryCall(`${url}/api/v1/health`), sentAt);
        }
      };

      // Health is watched on its own: every answer during the outage must be 503 STORE_UNAVAILABLE.
      const healthSeen: Record<Window, number[]> = { before: [], transition: [], outage: [], after: [] };
      let loading = true;
      const watching = (async () => {
        while (loading) {
          const sentIn = phase;
          const sentAt = Date.now();
          const r = await tryCall(`${url}/api/v1/health`);
          took('health (watched)', sentIn, sentAt);
          const window = windowOf(sentIn);
          healthSeen[window].push(r?.status ?? 0);
          const fine =
            r !== undefined &&
            (isStoreUnavailable(r) || (fault.healthMayStayUp === true && r.status === 200));
          if (window === 'outage' && !fine) violations.push(`outage: health ${r?.status ?? 'no answer'}`);
          await sleep(250);
        }
      })();
      const load = lanes(LANES, () => !loading, step);

      await sleep(BEFORE_MS);
      phase = 'stopping';
      await fault.begin(server);
      phase = 'down';
      outageStartedAt = Date.now();
      await sleep(fault.ms);
      phase = 'restarting';
      await fault.end(server);
      const restartedAt = Date.now();
      // Recovery without restarting the service: health and a write succeed again.
      const recoveryMs = await eventually(
        'health and writes recover',
        async () => {
          const health = await tryCall(`${url}/api/v1/health`);
          const write = await post(`${url}/api/v1/sync/events`, { events: marks(1, studentIds, sessionId) });
          return health?.status === 200 && write?.status === 200;
        },
        60_000,
        250,
      ).catch((e: unknown) => {
        throw new Error(`${String(e)}\n${service.logTail()}`);
      });
      phase = 'up';
      await sleep(AFTER_MS);
      loading = false;
      await load;
      await watching;

      const outageSeconds = ((restartedAt - outageStartedAt) / 1000).toFixed(1);
      const lostInOutage =
        acknowledgedInOutage.length === 0 ? [] : await missingEvents(url, acknowledgedInOutage);
      const lost = await missingEvents(url, acknowledgedEvents);
      const after = await afterTheFault(server);
      const projected = projectedCheckins(after.projections);
      const checkinsLost = [...checkedIn].filter((id) => !projected.has(id));
      const checkoutsLost = [...checkedOut].filter((id) => projected.get(id) !== 'CHECKED_OUT');
      const outage = tallies.outage;
      figure(
        fault.name,
        `${outageSeconds} s outage: ${outage.total()} requests (${outage.toString()}), the longest answered in ` +
          `${longestInOutageMs} ms; the longest request of the row took ${longest.ms} ms ` +
          `(${longest.label}, sent while ${longest.sentIn}); health during it ` +
          `${[...new Set(healthSeen.outage)].join('/')} (${healthSeen.outage.length} polls); process ` +
          `${service.running() ? 'up' : `exited ${JSON.stringify(service.exit())}`}; recovered ${recoveryMs} ms after the ` +
          `server came back, no restart; after: ${tallies.after.toString()}; ${violations.length} violations; ` +
          `acknowledged: ${acknowledgedEvents.length} events (${lost.length} lost), ${checkedIn.size} check-ins and ` +
          `${checkedOut.size} check-outs (${checkinsLost.length + checkoutsLost.length} not in the projections); ` +
          `${after.twice} events projected twice, ${after.withConflicts} stored under conflicting revisions, ` +
          `${after.outOfLine.length} check-in records out of line; projections ` +
          `${after.settledMs < 0 ? 'DIFFER from' : `equal (after ${after.settledMs} ms)`} a rebuild of ${after.events} events (read once the copies agreed, ${after.copiesMs} ms)` +
          // Said here too: a failure on an earlier assertion would otherwise hide what differs.
          `${after.differing.length === 0 ? '' : `; differing: ${after.differing.slice(0, 3).join(' | ')}`}` +
          `${after.lineages.length === 0 ? '' : `; lineages: ${after.lineages.join(' | ')}`}` +
          // A failed row says what the pipeline was doing and what the service kept logging.
          (violations.length > 0 || after.settledMs < 0
            ? `; pipeline: ${await pipelineGauges(url)}; logged: ${service.logSummary()}`
            : ''),
      );
      expect(service.running(), `the service exited\n${service.logTail()}`).to.equal(true);
      expect(healthSeen.outage.length, 'health was polled during the outage').to.be.greaterThan(0);
      expect(lostInOutage, 'writes acknowledged during the outage and not stored').to.deep.equal([]);
      expect(
        violations.slice(0, 10),
        `${violations.length} violations; the service logged, first:\n${service.errorLines().slice(0, 2).join('\n')}`,
      ).to.deep.equal([]);
      expect(tallies.after.total(), 'requests served after recovery').to.be.greaterThan(0);
      expect(lost, 'events acknowledged at any time and not stored').to.deep.equal([]);
      expect(checkinsLost, 'check-ins answered 201 that the projections do not hold').to.deep.equal([]);
      expect(checkoutsLost, 'check-outs answered 200 that the projections do not show').to.deep.equal([]);
      expect(after.twice, 'events projected twice').to.equal(0);
      expect(after.withConflicts, 'events stored under conflicting revisions').to.equal(0);
      expect(after.outOfLine, 'check-in records out of line with the projections').to.deep.equal([]);
      expect(
        after.differing.slice(0, 12),
        `documents of the projections that differ from a rebuild from the stored events (${after.differing.length}; the first 12)`,
      ).to.deep.equal([]);
      // Bounded by the deadline, not by the fault: a contract, asserted as such.
      expect(longest.ms, `the longest request of the row (${longest.label}, ms)`).to.be.below(
        DEADLINE_MS + DEADLINE_SLACK_MS,
      );
    });
  });
