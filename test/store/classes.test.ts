/** The class store on the embedded store: decoded reads, create-only ids, compare-and-swap updates. */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { type ClassStore, classDocId, classStore } from '../../src/store/classes.js';
import { openStore, type Store } from '../../src/store/store.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

const AT = '2026-03-01T12:00:00.000Z';
const LATER = '2026-03-01T12:05:00.000Z';

describe('class store', () => {
  let dir: string;
  let store: Store;
  let classes: ClassStore;

  beforeEach(async () => {
    dir = await makeTempDir('classes');
    store = await openStore({ kind: 'embedded', dataDir: dir, prefix: 'chamada_' });
    classes = classStore(store.db.private);
  });
  afterEach(async () => {
    await store.close();
    await removeDir(dir);
  });

  it('reads back what it created, and answers undefined for unknown ids', async () => {
    const nucleus = await classes.createNucleus({ name: 'Sul', createdAt: AT, updatedAt: AT });
    const cls = await classes.createClass({
      name: 'Juniores',
      nucleusId: nucleus.nucleusId,
      createdAt: AT,
      updatedAt: AT,
    });
    const session = await classes.createSession({
      classId: cls.classId,
      nucleusId: cls.nucleusId,
      date: '2026-03-01',
      title: null,
      startsAt: null,
      endsAt: null,
      createdAt: AT,
      updatedAt: AT,
    });
    expect(cls._id).to.equal(classDocId(cls.classId));
    expect(await classes.getNucleus(nucleus.nucleusId)).to.deep.equal(nucleus);
    expect(await classes.getClass(cls.classId)).to.deep.equal(cls);
    expect(await classes.getSession(session.sessionId)).to.deep.equal(session);
    expect(await classes.getNucleus(randomUUID())).to.equal(undefined);
    expect(await classes.getClass(randomUUID())).to.equal(undefined);
    expect(await classes.getSession(randomUUID())).to.equal(undefined);
    // Each kind lives under its own id prefix: a class id is not a session id.
    expect(await classes.getSession(cls.classId)).to.equal(undefined);
  });

  it('an update from a stale revision answers CONFLICT and leaves the newer write in place', async () => {
    const cls = await classes.createClass({
      name: 'Juniores',
      nucleusId: null,
      createdAt: AT,
      updatedAt: AT,
    });
    const first = await classes.updateClass(cls, { ...fieldsOf(cls), name: 'Juvenis', updatedAt: LATER });
    expect(first).to.not.equal('CONFLICT');
    const stale = await classes.updateClass(cls, { ...fieldsOf(cls), name: 'Outro', updatedAt: LATER });
    expect(stale).to.equal('CONFLICT');
    expect((await classes.getClass(cls.classId))?.name).to.equal('Juvenis');
  });

  it('filters sessions by date and class in memory', async () => {
    const a = randomUUID();
    const b = randomUUID();
    const session = (classId: string, date: string) =>
      classes.createSession({
        classId,
        nucleusId: null,
        date,
        title: null,
        startsAt: null,
        endsAt: null,
        createdAt: AT,
        updatedAt: AT,
      });
    const a1 = await session(a, '2026-03-01');
    const b1 = await session(b, '2026-03-01');
    const a2 = await session(a, '2026-03-08');
    expect((await classes.listSessions({ date: '2026-03-01' })).map((s) => s.sessionId)).to.have.members([
      a1.sessionId,
      b1.sessionId,
    ]);
    expect((await classes.listSessions({ classId: a })).map((s) => s.sessionId)).to.deep.equal([
      a1.sessionId,
      a2.sessionId,
    ]);
    expect(await classes.listSessions({ classId: b, date: '2026-03-08' })).to.deep.equal([]);
    expect(await classes.listSessions()).to.have.length(3);
  });
});

const fieldsOf = (doc: { name: string; nucleusId: string | null; createdAt: string; updatedAt: string }) => ({
  name: doc.name,
  nucleusId: doc.nucleusId,
  createdAt: doc.createdAt,
  updatedAt: doc.updatedAt,
});
