/**
 * What a browser app keeps between visits, as the transport needs it: this browser's device id and
 * the signed-in user. Written against the Web Storage methods only, so each app chooses the store
 * (the kiosk's localStorage survives a restart, the office's sessionStorage ends with the tab) and the
 * tests hand in a map. What comes back from storage is input like any other, decoded on the way in.
 */
import * as E from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import { isUuid } from '../domain/codec.js';

export interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** This browser's `X-Device-Id`: a UUID made once and kept under `key` (each app has its own). */
export const deviceIdIn = (
  store: KeyValueStore,
  key: string,
  newId: () => string = () => crypto.randomUUID(),
): string => {
  const known = store.getItem(key);
  if (known !== null && isUuid(known)) return known;
  const made = newId();
  store.setItem(key, made);
  return made;
};

export interface Kept<A> {
  load(): A | undefined;
  save(value: A | undefined): void;
}

/** A value kept as JSON under `key`; what no longer decodes (a change of shape) reads as nothing. */
export const keptIn = <A, O>(store: KeyValueStore, key: string, codec: t.Type<A, O, unknown>): Kept<A> => ({
  load() {
    const text = store.getItem(key);
    if (text === null) return undefined;
    try {
      const decoded = codec.decode(JSON.parse(text));
      return E.isRight(decoded) ? decoded.right : undefined;
    } catch {
      return undefined;
    }
  },
  save(value) {
    if (value === undefined) store.removeItem(key);
    else store.setItem(key, JSON.stringify(codec.encode(value)));
  },
});
