/**
 * Deactivating and reactivating nuclei, classes and sessions (decision 0047), stated once.
 *
 * A nucleus, class or session is ACTIVE or DEACTIVATED; nothing is ever deleted by it, so reports,
 * exports and audits go on naming what they named. What a deactivation stops: check-ins into the
 * session or into any session of the class (the admission rule's refusal of fact), new sessions for
 * the class (by hand or by a schedule), new classes in the nucleus. What it never stops: a child in
 * the room being checked out.
 *
 * The rule keeps one invariant between levels, so a check-in reads no more than its session and
 * class: **no active class in a deactivated nucleus.**
 * - A nucleus is deactivated only once none of its classes is active (refused with the active
 *   classes named), never by cascade: each class's state is then its own, and reactivating the
 *   nucleus brings back nothing the coordinator did not choose.
 * - A class is not reactivated, created or moved into a deactivated nucleus.
 * - A session is not reactivated, created or moved into a deactivated class. A class's sessions are
 *   not deactivated with it (they are many, and some are a schedule's future): a session of a
 *   deactivated class is closed by its class, whatever its own status.
 *
 * A second deactivation, or a reactivation of what is active, is refused as a user's second
 * deactivation is (409), so a client learns that nothing changed.
 */
import * as E from 'fp-ts/lib/Either.js';
import type { ActivityStatus } from '../domain/classes.js';

export type Deactivatable = 'nucleus' | 'class' | 'session';
export type StatusChange = 'DEACTIVATE' | 'REACTIVATE';

export type StatusRefusal =
  | { readonly reason: 'ALREADY_DEACTIVATED' }
  | { readonly reason: 'ALREADY_ACTIVE' }
  /** A nucleus with active classes: they are deactivated (or moved) first. */
  | { readonly reason: 'NUCLEUS_HAS_ACTIVE_CLASSES'; readonly classIds: ReadonlyArray<string> }
  | ParentRefusal;

/** What a deactivated parent refuses: a class under a deactivated nucleus, a session under a deactivated class. */
export type ParentRefusal =
  | { readonly reason: 'NUCLEUS_DEACTIVATED' }
  | { readonly reason: 'CLASS_DEACTIVATED' };

export interface StatusFacts {
  readonly status: ActivityStatus;
  /**
   * The status of what it belongs to: a class's nucleus, a session's class; null when there is none
   * (a class without a nucleus; a nucleus).
   */
  readonly parent: ActivityStatus | null;
  /** A nucleus's active classes, by id (empty for a class or session). */
  readonly activeClassIds: ReadonlyArray<string>;
}

/** Whether `kind` may be placed (created, moved, reactivated) under a parent of `parent` status. */
export const placementRefusal = (
  kind: Deactivatable,
  parent: ActivityStatus | null,
): ParentRefusal | undefined => {
  if (parent !== 'DEACTIVATED') return undefined;
  if (kind === 'class') return { reason: 'NUCLEUS_DEACTIVATED' };
  if (kind === 'session') return { reason: 'CLASS_DEACTIVATED' };
  return undefined;
};

/** The status after `change`, or why it is refused: see the module's header for the rule. */
export const decideStatusChange = (
  kind: Deactivatable,
  change: StatusChange,
  facts: StatusFacts,
): E.Either<StatusRefusal, ActivityStatus> => {
  if (change === 'DEACTIVATE') {
    if (facts.status === 'DEACTIVATED') return E.left({ reason: 'ALREADY_DEACTIVATED' });
    if (kind === 'nucleus' && facts.activeClassIds.length > 0)
      return E.left({ reason: 'NUCLEUS_HAS_ACTIVE_CLASSES', classIds: [...facts.activeClassIds].sort() });
    return E.right('DEACTIVATED');
  }
  if (facts.status === 'ACTIVE') return E.left({ reason: 'ALREADY_ACTIVE' });
  const refused = placementRefusal(kind, facts.parent);
  return refused === undefined ? E.right('ACTIVE') : E.left(refused);
};
