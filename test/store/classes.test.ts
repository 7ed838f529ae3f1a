/** The class store on the embedded store: decoded reads, create-only ids, compare-and-swap updates. */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { NucleusDoc } from '../../src/domain/classes.js';
import {
  type ClassStore,
  classDocId,
  classStore,
  nucleusDocId,
  nucleusNameClaimId,
} from '../../src/store/classes.js';
import type { Database } from '../../src/store/pouch.js';
import { withQuorumWrites } from '../../src/store/quorumWrites.js';
import { openStore, type Store } from '../../src/store/store.js';
import { databasePerTest, storeBackends } from '../support/storeBackends.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

const AT = '2026-03-01T12:00:00.000Z';

/** A session of a class on a day, with no title or times. */
const sessionInput = (
  classId: string,
  nucleusId: string | null = null,
  date = '2026-03-01',
): Parameters<ClassStore['createSession']>[0] => ({
  classId,
  nucleusId,
  date,
  title: null,
  startsAt: null,
  endsAt: null,
  createdAt: AT,
  updatedAt: AT,
});
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

  /** A nucleus that must be created (its name free). */
  const nucleusNamed = async (name: string, at = AT, store: ClassStore = classes) => {
    const created = await store.createNucleus({ name, createdAt: at, updatedAt: at });
    if (created === 'NAME_TAKEN') throw new Error(`${name} was taken`);
    return created;
  };

  it('reads back what it created, and answers undefined for unknown ids', async () => {
    const nucleus = await nucleusNamed('Sul');
    const cls = await classes.createClass({
      name: 'Juniores',
      nucleusId: nucleus.nucleusId,
      createdAt: AT,
      updatedAt: AT,
    });
    const session = await classes.createSession(sessionInput(cls.classId, cls.nucleusId));
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

  describe('nucleus names, unique once folded', () => {
    const rename = (n: NucleusDoc, name: string, at = LATER, store: ClassStore = classes) =>
      store.updateNucleus(n, { name, createdAt: n.createdAt, updatedAt: at });

    it('refuses a name another nucleus has, case and accents aside, on create and on rename', async () => {
      const south = await nucleusNamed('Zona Sul');
      const north = await nucleusNamed('Zona Norte');
      for (const name of ['zona sul', 'ZÔNA  SUL', ' Zona Sul '])
        expect(await classes.createNucleus({ name, createdAt: LATER, updatedAt: LATER }), name).to.equal(
          'NAME_TAKEN',
        );
      expect(await rename(north, 'zona súl')).to.equal('NAME_TAKEN');
      expect((await classes.listNuclei()).map((n) => n.name)).to.deep.equal(['Zona Norte', 'Zona Sul']);
      // Its own name in other letters is no collision.
      expect(await rename(south, 'ZONA SUL')).to.deep.include({ name: 'ZONA SUL' });
    });

    it('a rename frees the old name and holds the new one', async () => {
      const south = await nucleusNamed('Zona Sul');
      const renamed = await rename(south, 'Centro');
      expect(renamed).to.deep.include({ name: 'Centro' });
      expect(await nucleusNamed('Zona Sul', LATER)).to.deep.include({ name: 'Zona Sul' });
      expect(await classes.createNucleus({ name: 'centro', createdAt: LATER, updatedAt: LATER })).to.equal(
        'NAME_TAKEN',
      );
    });

    it('two instances creating one name at once: exactly one nucleus is made', async () => {
      const other = classStore(store.db.private);
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          (i % 2 === 0 ? classes : other).createNucleus({
            name: i < 3 ? 'Vila Nova' : 'vila nova',
            createdAt: AT,
            updatedAt: AT,
          }),
        ),
      );
      expect(answers.filter((a) => a !== 'NAME_TAKEN')).to.have.length(1);
      expect(await classes.listNuclei()).to.have.length(1);
    });

    it('nuclei that shared a name before names were unique stay readable and writable, and block the name', async () => {
      for (const nucleusId of [randomUUID(), randomUUID()])
        await store.db.private.put({
          _id: nucleusDocId(nucleusId),
          docType: 'nucleus',
          nucleusId,
          name: 'Centro',
          createdAt: AT,
          updatedAt: AT,
        });
      const [first, second] = await classes.listNuclei();
      if (first === undefined || second === undefined) throw new Error('both nuclei are listed');
      expect(await classes.createNucleus({ name: 'CENTRO', createdAt: LATER, updatedAt: LATER })).to.equal(
        'NAME_TAKEN',
      );
      expect(await rename(first, 'centro')).to.deep.include({ name: 'centro' });
      expect(await rename(second, 'Centro Velho')).to.deep.include({ name: 'Centro Velho' });
    });

    it('a claim left by a create that failed half-way is taken over once it is old, not while young', async () => {
      await store.db.private.put({
        _id: nucleusNameClaimId('Leste'),
        docType: 'nucleusName',
        nucleusId: randomUUID(),
        claimedAt: AT,
      });
      const soon = '2026-03-01T12:01:00.000Z';
      expect(await classes.createNucleus({ name: 'Leste', createdAt: soon, updatedAt: soon })).to.equal(
        'NAME_TAKEN',
      );
      expect(await nucleusNamed('leste', '2026-03-01T12:06:00.000Z')).to.deep.include({ name: 'leste' });
    });
  });

  it('filters sessions by date and class in memory', async () => {
    const a = randomUUID();
    const b = randomUUID();
    const session = (classId: string, date: string) =>
      classes.createSession(sessionInput(classId, null, date));
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

for (const [backend, host] of storeBackends('class-status')) {
  describe(`class store: the status of nuclei, classes and sessions on ${backend} (0047)`, function () {
    this.timeout(60_000);
    const per = databasePerTest(host, 'class-status');
    // As the service opens the private database: on a cluster, a write is judged by quorum (0023).
    let db: Database;
    let classes: ClassStore;
    beforeEach(() => {
      db = withQuorumWrites(per.db());
      classes = classStore(db);
    });

    const newClass = () =>
      classes.createClass({ name: 'Juniores', nucleusId: null, createdAt: AT, updatedAt: AT });
    const newSession = (classId: string) => classes.createSession(sessionInput(classId));

    it('creates active records, and sets a status on the read revision, reading it back', async () => {
      const created = await classes.createNucleus({ name: 'Sul', createdAt: AT, updatedAt: AT });
      if (created === 'NAME_TAKEN') throw new Error('taken');
      const cls = await newClass();
      const session = await newSession(cls.classId);
      for (const doc of [created, cls, session]) expect(doc.status).to.equal('ACTIVE');

      const off = await classes.setStatus(cls, 'DEACTIVATED', LATER);
      expect(off).to.deep.include({ status: 'DEACTIVATED', updatedAt: LATER, name: 'Juniores' });
      expect(await classes.getClass(cls.classId)).to.deep.equal(off);
      const sessionOff = await classes.setStatus(session, 'DEACTIVATED', LATER);
      expect((await classes.getSession(session.sessionId))?.status).to.equal('DEACTIVATED');
      expect(sessionOff).to.not.equal('CONFLICT');
      const nucleusOff = await classes.setStatus(created, 'DEACTIVATED', LATER);
      expect((await classes.getNucleus(created.nucleusId))?.status).to.equal('DEACTIVATED');
      expect(nucleusOff).to.not.equal('CONFLICT');
    });

    it('a status set on a stale revision answers CONFLICT and changes nothing', async () => {
      const cls = await newClass();
      const renamed = await classes.updateClass(cls, { ...fieldsOf(cls), name: 'Juvenis', updatedAt: LATER });
      expect(renamed).to.not.equal('CONFLICT');
      expect(await classes.setStatus(cls, 'DEACTIVATED', LATER)).to.equal('CONFLICT');
      expect(await classes.getClass(cls.classId)).to.deep.include({ name: 'Juvenis', status: 'ACTIVE' });
    });

    it('an edit keeps the status it read: renaming or a schedule rewriting a record never reactivates it', async () => {
      const cls = await newClass();
      const off = await classes.setStatus(cls, 'DEACTIVATED', LATER);
      if (off === 'CONFLICT') throw new Error('conflict');
      const renamed = await classes.updateClass(off, { ...fieldsOf(off), name: 'Antiga', updatedAt: LATER });
      expect(renamed).to.deep.include({ name: 'Antiga', status: 'DEACTIVATED' });
      expect(await classes.getClass(cls.classId)).to.deep.include({ name: 'Antiga', status: 'DEACTIVATED' });

      const session = await classes.setStatus(await newSession(cls.classId), 'DEACTIVATED', LATER);
      if (session === 'CONFLICT') throw new Error('conflict');
      const { _id, _rev, docType, sessionId, status, ...fields } = session;
      await classes.updateSession(session, { ...fields, title: 'Culto', updatedAt: LATER });
      expect(await classes.getSession(sessionId)).to.deep.include({ title: 'Culto', status: 'DEACTIVATED' });
    });

    it('a record stored before statuses existed reads as it was, and stays without one when edited', async () => {
      const classId = randomUUID();
      await db.put({
        _id: classDocId(classId),
        docType: 'class',
        classId,
        name: 'De antes',
        nucleusId: null,
        createdAt: AT,
        updatedAt: AT,
      });
      const old = await classes.getClass(classId);
      if (old === undefined) throw new Error('not read');
      expect(old).not.to.have.property('status');
      const renamed = await classes.updateClass(old, {
        ...fieldsOf(old),
        name: 'Renomeada',
        updatedAt: LATER,
      });
      expect(renamed).not.to.have.property('status');
      expect((await classes.listClasses()).map((c) => c.classId)).to.deep.equal([classId]);
    });
  });
}
