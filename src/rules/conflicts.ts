/**
 * The conflict rule, stated once.
 *
 * Every change is an event about one *aspect* of one subject (a student field, a check-in's state, a
 * child's attendance mark for a session) and names the version of that aspect its device last saw
 * (`baseVersion`: the id of the event that produced it, or null for "never changed"). Two events
 * conflict when they change the same aspect from the same base: neither knew of the other. Between
 * conflicting events the higher-privilege actor wins (ADMIN over every other role: ADMIN_PRECEDENCE);
 * between equals the later `clientTimestamp` wins, then the greater `eventId` (LAST_WRITER_WINS). The
 * winner becomes the aspect's next version; later events based on it apply in turn (ADMIN precedence
 * never freezes an aspect). Losers, and events built on a loser, are superseded but kept. Events whose
 * base has not arrived yet wait. The result depends only on the set of events, never on their order of
 * arrival, so every server and device converges.
 */

export interface AspectEvent {
  readonly eventId: string;
  readonly aspect: string;
  readonly baseVersion: string | null;
  readonly actorRole: string;
  readonly clientTimestamp: string;
}

export type ConflictPolicy = 'ADMIN_PRECEDENCE' | 'LAST_WRITER_WINS' | 'BASED_ON_SUPERSEDED';

export interface ConflictRecord {
  readonly aspect: string;
  readonly policy: ConflictPolicy;
  readonly winnerEventId: string;
  readonly loserEventId: string;
}

export interface AspectResolution {
  /** The events that took effect, in order; the last one is the aspect's current version. */
  readonly applied: ReadonlyArray<string>;
  readonly superseded: ReadonlyArray<string>;
  /** Events whose base has not arrived yet. */
  readonly waiting: ReadonlyArray<string>;
  readonly conflicts: ReadonlyArray<ConflictRecord>;
}

const rank = (role: string): number => (role === 'ADMIN' ? 1 : 0);

/** Negative when `a` wins over `b`. */
export const precedence = (a: AspectEvent, b: AspectEvent): number =>
  rank(b.actorRole) - rank(a.actorRole) ||
  (a.clientTimestamp === b.clientTimestamp ? 0 : a.clientTimestamp > b.clientTimestamp ? -1 : 1) ||
  (a.eventId === b.eventId ? 0 : a.eventId > b.eventId ? -1 : 1);

const policyOf = (winner: AspectEvent, loser: AspectEvent): ConflictPolicy =>
  rank(winner.actorRole) > rank(loser.actorRole) ? 'ADMIN_PRECEDENCE' : 'LAST_WRITER_WINS';

/** Resolves every event of one aspect. */
export const resolveAspect = (aspect: string, events: ReadonlyArray<AspectEvent>): AspectResolution => {
  const byBase = new Map<string | null, AspectEvent[]>();
  for (const e of events) {
    const list = byBase.get(e.baseVersion) ?? [];
    list.push(e);
    byBase.set(e.baseVersion, list);
  }
  const applied: string[] = [];
  const superseded: string[] = [];
  const conflicts: ConflictRecord[] = [];
  const reached = new Set<string>();

  // Everything built on a losing event loses with it, naming the winner that decided its branch.
  const supersedeBranch = (loser: AspectEvent, winner: AspectEvent) => {
    const stack: AspectEvent[] = [...(byBase.get(loser.eventId) ?? [])];
    while (stack.length > 0) {
      const e = stack.pop();
      if (e === undefined || reached.has(e.eventId)) continue;
      reached.add(e.eventId);
      superseded.push(e.eventId);
      conflicts.push({
        aspect,
        policy: 'BASED_ON_SUPERSEDED',
        winnerEventId: winner.eventId,
        loserEventId: e.eventId,
      });
      stack.push(...(byBase.get(e.eventId) ?? []));
    }
  };

  let base: string | null = null;
  for (;;) {
    const children: AspectEvent[] = [...(byBase.get(base) ?? [])].sort(precedence);
    const [winner, ...losers] = children;
    if (winner === undefined) break;
    reached.add(winner.eventId);
    applied.push(winner.eventId);
    for (const loser of losers) {
      reached.add(loser.eventId);
      superseded.push(loser.eventId);
      conflicts.push({
        aspect,
        policy: policyOf(winner, loser),
        winnerEventId: winner.eventId,
        loserEventId: loser.eventId,
      });
      supersedeBranch(loser, winner);
    }
    base = winner.eventId;
  }
  const waiting = events.filter((e) => !reached.has(e.eventId)).map((e) => e.eventId);
  // Sorted, so the same set of events gives the same lists whatever order they arrived in.
  return {
    applied,
    superseded: superseded.sort(),
    waiting: waiting.sort(),
    conflicts: conflicts.sort((a, b) =>
      a.loserEventId < b.loserEventId ? -1 : a.loserEventId > b.loserEventId ? 1 : 0,
    ),
  };
};

/** Resolves a set of events over many aspects; the output is sorted so equal sets give equal results. */
export const resolveAll = (events: ReadonlyArray<AspectEvent>): Map<string, AspectResolution> => {
  const byAspect = new Map<string, AspectEvent[]>();
  for (const e of events) {
    const list = byAspect.get(e.aspect) ?? [];
    list.push(e);
    byAspect.set(e.aspect, list);
  }
  return new Map(
    [...byAspect.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([aspect, list]) => [aspect, resolveAspect(aspect, list)]),
  );
};
