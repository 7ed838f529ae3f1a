/**
 * Ids derived from a keyed request. Every attempt of one request (the client's retry under its
 * Idempotency-Key after a 503, or the other instance running it once the first released its claim)
 * names the same check-in, student and event, so an attempt that meets an earlier attempt's effects
 * recognises them as its own: the event is stored once (a duplicate id is no second event), and the
 * answer is that event's outcome rather than "already checked in". Without a key, fresh random ids.
 */
import { randomUUID } from 'node:crypto';
import { v5 } from 'uuid';

/** A fixed namespace of this service's derived ids (RFC 9562 name-based, SHA-1). */
const NAMESPACE = '4c0e6a52-3f1d-5b8e-9a27-6d1f0c9b8e31';

export const requestScopedId = (requestKey: string | undefined, purpose: string): string =>
  requestKey === undefined ? randomUUID() : v5(`${purpose}\n${requestKey}`, NAMESPACE);

/** The scope of a keyed request: its principal and its key (a key is the client's, per principal). */
export const requestKeyOf = (principalId: string, idempotencyKey: string): string =>
  `${principalId}\n${idempotencyKey.toLowerCase()}`;
