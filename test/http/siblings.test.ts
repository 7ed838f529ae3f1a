/** Siblings in the tablets' roster: a shared guardian phone becomes a shared opaque family key. */
import { expect } from 'chai';
import { useService } from '../support/harness.js';
import { createdId, seedSmallRoster } from '../support/seed.js';
import { makeTablet, type Tablet } from '../support/tablet.js';
import { DEV_TOKENS } from '../support/testService.js';

describe('siblings in the tablets roster', function () {
  this.timeout(60_000);
  let tablet: Tablet;
  // Registered before the service's hooks: the tablet closes before the service stops.
  afterEach(() => tablet.close());
  const h = useService({}, 'test');
  beforeEach(() => {
    tablet = makeTablet(h.url, DEV_TOKENS.DEV_CALLER_TOKEN);
  });

  it('children whose guardian phone is the same share a family key; the key holds none of the number', async () => {
    const { classId } = await seedSmallRoster(h.url, [], new Date().toISOString().slice(0, 10));
    const child = (displayName: string, number: string) =>
      createdId(
        h.url,
        '/api/v1/students',
        { displayName, guardianName: 'Rita Prado', phones: [{ number, qualifier: 'mãe' }], classId },
        'studentId',
      );
    const helena = await child('Helena', '+55 11 91234-5678');
    const caio = await child('Caio', '(11) 91234-5678');
    const other = await child('Outro', '+55 21 97777-1111');
    await h.svc.deps.sync.pipeline.catchUp();
    await h.svc.deps.replication.reconciler.refresh();
    await tablet.pull();
    const students = await tablet.docs('rosterStudent');
    const families = (id: string) => students.get(`student:${id}`)?.families;
    expect(families(helena)).to.have.length(1);
    expect(families(caio)).to.deep.equal(families(helena));
    expect(families(other)).to.have.length(1);
    expect(families(other)).not.to.deep.equal(families(helena));
    const everything = JSON.stringify([...students.values()]);
    for (const digits of ['91234', '11912345678', '97777']) expect(everything).not.to.contain(digits);
  });
});
