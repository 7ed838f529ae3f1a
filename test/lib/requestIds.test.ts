import { expect } from 'chai';
import { requestKeyOf, requestScopedId } from '../../src/lib/requestIds.js';

describe('ids derived from a keyed request', () => {
  const key = requestKeyOf('user-1', '3F0F6B8E-2C1D-4A5B-9C8D-7E6F5A4B3C2D');

  it('names the same thing alike on every attempt of one request', () => {
    expect(requestScopedId(key, 'check-in')).to.equal(requestScopedId(key, 'check-in'));
    // The ledger keys by principal and key, the key case-insensitively: so do the ids.
    expect(
      requestScopedId(requestKeyOf('user-1', '3f0f6b8e-2c1d-4a5b-9c8d-7e6f5a4b3c2d'), 'check-in'),
    ).to.equal(requestScopedId(key, 'check-in'));
  });

  it('names different things, principals and keys apart', () => {
    const ids = [
      requestScopedId(key, 'check-in'),
      requestScopedId(key, 'CHECK_IN'),
      requestScopedId(requestKeyOf('user-2', '3f0f6b8e-2c1d-4a5b-9c8d-7e6f5a4b3c2d'), 'check-in'),
      requestScopedId(requestKeyOf('user-1', '00000000-2c1d-4a5b-9c8d-7e6f5a4b3c2d'), 'check-in'),
    ];
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('is a UUID either way, and a fresh random one without a key', () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    expect(requestScopedId(key, 'student')).to.match(uuid);
    expect(requestScopedId(undefined, 'student')).to.match(uuid);
    expect(requestScopedId(undefined, 'student')).not.to.equal(requestScopedId(undefined, 'student'));
  });
});
