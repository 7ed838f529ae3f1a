/**
 * Caches shared between instances on one CouchDB (issue #23): a document another instance changes is
 * read anew once the private change feed tells this instance, and this instance's own change is read
 * back at once. Without the feed's forgetting, the instance that did not write would answer the value
 * it cached for good.
 */
import { expect } from 'chai';
import * as t from 'io-ts';
import { call, decodeAs } from '../support/http.js';
import { readUntil } from '../support/readUntil.js';
import { createdId } from '../support/seed.js';
import * as svc from '../support/testService.js';

const admin = svc.DEV_TOKENS.DEV_ADMIN_TOKEN;

describe('caches shared by two instances on one CouchDB-protocol server', function () {
  this.timeout(60_000);
  const instances = svc.twoInstancesOnOneCouch();

  const configPath = '/api/v1/church/check-in-config';
  const attemptsOn = async (on: svc.TestService): Promise<number> => {
    const r = await call(`${on.url}${configPath}`, { headers: svc.authHeaders(admin) });
    expect(r.status, r.text).to.equal(200);
    return decodeAs(t.type({ maxCheckoutAttempts: t.number }), r.json).maxCheckoutAttempts;
  };
  const save = async (on: svc.TestService, maxCheckoutAttempts: number) => {
    const body = { pickupMode: 'CODE_ONLY', maxCheckoutAttempts, emergencyCheckoutAdminOnly: false };
    const r = await svc.mutate(`${on.url}${configPath}`, 'PUT', body, admin);
    expect(r.status, r.text).to.equal(200);
  };

  it("reads the other instance's change once the feed tells it, and its own change at once", async () => {
    const { a, b } = instances();
    await save(a, 4);
    // Both read (and cache) the configuration as it stands.
    expect(await attemptsOn(a)).to.equal(4);
    expect(await attemptsOn(b)).to.equal(4);
    await save(b, 9);
    // Reads your own writes: the writer answers the new value straight away.
    expect(await attemptsOn(b)).to.equal(9);
    // The other follows within the feed's delay (bounded here, never timed as a figure).
    const seen = await readUntil(
      () => attemptsOn(a),
      (n) => n === 9,
    );
    expect(seen, "the other instance's cached configuration was never forgotten").to.equal(9);
    // And the other way round: the feed keeps following.
    await save(a, 2);
    expect(await attemptsOn(a)).to.equal(2);
    expect(
      await readUntil(
        () => attemptsOn(b),
        (n) => n === 2,
      ),
    ).to.equal(2);
  });

  it("follows the other instance's check-out of a check-in it holds, and answers its own close from the store", async () => {
    const { a, b } = instances();
    const classId = await createdId(a.url, '/api/v1/classes', { name: 'Turma' }, 'classId');
    const sessionId = await createdId(
      a.url,
      '/api/v1/sessions',
      { classId, date: '2026-11-25' },
      'sessionId',
    );
    const child = { displayName: 'Ana', guardianName: 'Bia', phones: [], classId };
    const studentId = await createdId(a.url, '/api/v1/students', child, 'studentId');
    const checkInId = await createdId(a.url, '/api/v1/check-in', { studentId, sessionId }, 'checkInId');
    const statusOn = async (on: svc.TestService): Promise<string> => {
      const r = await call(`${on.url}/api/v1/check-in/active?checkInId=${checkInId}`, {
        headers: svc.authHeaders(admin),
      });
      expect(r.status, r.text).to.equal(200);
      return decodeAs(t.type({ checkIn: t.type({ status: t.string }) }), r.json).checkIn.status;
    };
    expect(await statusOn(a)).to.equal('CHECKED_IN');
    const emergency = (on: svc.TestService) =>
      svc.mutate(
        `${on.url}/api/v1/check-out/emergency`,
        'POST',
        { checkInId, justification: 'Identidade conferida na porta', pickupPerson: 'Bia' },
        admin,
      );
    const out = await emergency(b);
    expect(out.status, out.text).to.equal(200);
    expect(out.json).to.deep.include({ status: 'CHECKED_OUT' });
    // A closes it too, whatever it still holds: the answer comes from what is stored.
    const again = await emergency(a);
    expect(again.status, again.text).to.equal(409);
    const seen = await readUntil(
      () => statusOn(a),
      (s) => s === 'CHECKED_OUT',
    );
    expect(seen, "the other instance's check-out never reached this one's cache").to.equal('CHECKED_OUT');
  });
});
