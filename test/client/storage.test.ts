/** What the browser apps keep: the device id, and the sign-in decoded on its way back in. */
import { expect } from 'chai';
import * as t from 'io-ts';
import { deviceIdIn, type KeyValueStore, keptIn } from '../../src/client/storage.js';

const mapStore = (entries: Record<string, string> = {}): KeyValueStore & { map: Map<string, string> } => {
  const map = new Map(Object.entries(entries));
  return {
    map,
    getItem: (k) => map.get(k) ?? null,
    setItem: (k, v) => void map.set(k, v),
    removeItem: (k) => void map.delete(k),
  };
};

const ID = '0b4cf7a2-3c4d-4e5f-8a6b-7c8d9e0f1a2b';
const OTHER = '11111111-2222-4333-8444-555555555555';

describe('client: what the browser keeps', () => {
  it('makes the device id once and reads it back after', () => {
    const store = mapStore();
    expect(deviceIdIn(store, 'device', () => ID)).to.equal(ID);
    expect(deviceIdIn(store, 'device', () => OTHER)).to.equal(ID);
    expect(store.map.get('device')).to.equal(ID);
  });

  it('replaces a stored device id that is no UUID (the server would refuse it)', () => {
    const store = mapStore({ device: 'tablet-3' });
    expect(deviceIdIn(store, 'device', () => ID)).to.equal(ID);
  });

  it('keeps a value as JSON, reads it back, and forgets it', () => {
    const store = mapStore();
    const kept = keptIn(store, 'auth', t.type({ token: t.string }));
    expect(kept.load()).to.equal(undefined);
    kept.save({ token: 'a' });
    expect(kept.load()).to.deep.equal({ token: 'a' });
    kept.save(undefined);
    expect(store.map.has('auth')).to.equal(false);
  });

  it('reads what no longer decodes, or is no JSON, as nothing', () => {
    const codec = t.type({ token: t.string });
    expect(keptIn(mapStore({ auth: '{"token":1}' }), 'auth', codec).load()).to.equal(undefined);
    expect(keptIn(mapStore({ auth: '{token' }), 'auth', codec).load()).to.equal(undefined);
  });
});
