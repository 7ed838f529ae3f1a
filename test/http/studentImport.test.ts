/** Student import (decision 0030), black-box through the real app in development auth mode. */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ClassC } from '../../src/domain/classes.js';
import { Student, StudentPage } from '../../src/domain/student.js';
import { ImportReport } from '../../src/domain/studentImport.js';
import { couchServerLabel, startCouchServer } from '../support/couchServer.js';
import { TOKENS, useService } from '../support/harness.js';
import { fixture } from '../support/hooks.js';
import { call, decodeAs, expectEnvelope, issuePaths } from '../support/http.js';
import { mutationHeaders } from '../support/testService.js';

const ADMIN = TOKENS.ADMIN;
const CHAMADOR = TOKENS.CHAMADOR;
const CADASTRO = TOKENS.CADASTRO;

const FILE = [
  'Nome;Data de Nascimento;Responsável;Telefone;Turma;Alergias',
  'João da Silva;05/03/2019;Maria da Silva;(11) 98765-4321;Maternal;',
  'Ana Souza;2018-11-20;Pedro Souza;11 3456-7890;Maternal;amendoim',
  'Bia Lima;31/02/2019;Carla Lima;98765-4321;Maternal;',
  'Caio Reis;01/01/2020;Rita Reis;+55 21 99876-5432;Jardim;',
  ';01/01/2020;Sem Nome;;Maternal;',
].join('\r\n');

/**
 * The service on each kind of store: embedded, and on a CouchDB-protocol server (express-pouchdb, or the
 * real CouchDB of npm run test:couchdb) with databases of its own for each test.
 */
const backends: ReadonlyArray<readonly [string, () => () => Record<string, string>]> = [
  ['embedded', () => () => ({})],
  [
    couchServerLabel(),
    () => {
      const couch = fixture(
        'file',
        () => startCouchServer(),
        (c) => c.dispose(),
      );
      return () => ({ COUCHDB_URL: couch().url, DB_PREFIX: `import${randomUUID().slice(0, 8)}_` });
    },
  ],
];

for (const [backend, envOf] of backends)
  describe(`student import on ${backend}`, function () {
    this.timeout(60_000);
    const env = envOf();
    const h = useService(() => ({ clock: () => new Date('2026-03-01T12:00:00Z'), env: env() }), 'test');

    const upload = (
      body: string | Uint8Array<ArrayBuffer>,
      query: string,
      token: string = ADMIN,
      key: string = randomUUID(),
      contentType = 'text/csv',
    ) =>
      call(`${h.url}/api/v1/imports/students?${query}`, {
        method: 'POST',
        headers: { ...mutationHeaders(token, key), 'Content-Type': contentType },
        body,
      });
    const report = async (body: string | Uint8Array<ArrayBuffer>, query: string) => {
      const r = await upload(body, query);
      expect(r.status, r.text).to.equal(200);
      return decodeAs(ImportReport, r.json);
    };
    const createClass = async (name: string) => {
      const r = await call(`${h.url}/api/v1/classes`, {
        method: 'POST',
        headers: mutationHeaders(ADMIN),
        body: JSON.stringify({ name }),
      });
      return decodeAs(ClassC, r.json);
    };
    const listAll = async () => {
      const r = await h.get(`/api/v1/students?limit=200`, ADMIN);
      return decodeAs(StudentPage, r.json).items;
    };

    let maternal = '';
    beforeEach(async () => {
      maternal = (await createClass('Maternal')).classId;
    });

    it('a dry run reports every row with its errors and stores nothing', async () => {
      const r = await report(FILE, 'dryRun=true');
      expect(r.dryRun).to.equal(true);
      expect(r.rows).to.equal(5);
      expect(r.created).to.equal(2);
      expect(r.errors.map((e) => [e.row, e.column, e.code])).to.deep.equal([
        [4, 'Data de Nascimento', 'INVALID_DATE'],
        [4, 'Telefone', 'INVALID_PHONE'],
        [5, 'Turma', 'UNKNOWN_CLASS'],
        [6, 'Nome', 'REQUIRED'],
      ]);
      expect(r.outcomes.map((o) => o.action)).to.deep.equal(['create', 'create', 'error', 'error', 'error']);
      expect(r.columns.map((c) => c.field)).to.deep.equal([
        'displayName',
        'birthDate',
        'guardianName',
        'phone',
        'className',
        'allergies',
      ]);
      // No cell is quoted back in a message.
      for (const e of r.errors) expect(e.message).not.to.match(/Silva|Lima|Reis|98765|31\/02/);
      expect(await listAll()).to.deep.equal([]);
    });

    it('applying stores the valid rows whole, with phones as E.164, and a second import changes nothing', async () => {
      const applied = await report(FILE, 'dryRun=false');
      expect([applied.created, applied.updated, applied.unchanged, applied.errors.length]).to.deep.equal([
        2, 0, 0, 4,
      ]);
      const joao = applied.outcomes.find((o) => o.row === 2)?.studentId;
      if (joao === null || joao === undefined) throw new Error('no student for row 2');
      const read = await h.get(`/api/v1/students/${joao}`, ADMIN);
      const student = decodeAs(Student, read.json);
      expect(student.displayName).to.equal('João da Silva');
      expect(student.birthDate).to.equal('2019-03-05');
      expect(student.phones).to.deep.equal([{ number: '+5511987654321', qualifier: 'principal' }]);
      const again = await report(FILE, 'dryRun=false');
      expect([again.created, again.updated, again.unchanged]).to.deep.equal([0, 0, 2]);
      expect((await listAll()).map((s) => s.displayName)).to.deep.equal(['Ana Souza', 'João da Silva']);
    });

    it('a changed cell updates the matched child, and an empty optional cell leaves its value alone', async () => {
      await report(FILE, 'dryRun=false');
      const changed = FILE.replace('amendoim', 'amendoim e leite').replace(';(11) 98765-4321;', ';;');
      const r = await report(changed, 'dryRun=false');
      expect([r.created, r.updated, r.unchanged]).to.deep.equal([0, 1, 1]);
      expect(r.outcomes.find((o) => o.row === 3)?.changedFields).to.deep.equal(['allergies']);
    });

    it('a child registered at the desk is matched by name, birth date and guardian; a deleted one is not', async () => {
      const register = async (displayName: string, birthDate: string, guardianName: string) => {
        const r = await h.send('POST', '/api/v1/students', {
          displayName,
          birthDate,
          guardianName,
          classId: maternal,
          phones: [],
        });
        expect(r.status, r.text).to.equal(201);
        return decodeAs(Student, r.json).studentId;
      };
      // Folded alike: case and accents do not make another child.
      const ana = await register('ANA SOUZA', '2018-11-20', 'Pedro Souza');
      const joao = await register('João da Silva', '2019-03-05', 'Maria da Silva');
      const deleted = await h.send('POST', `/api/v1/students/${joao}/delete`, {
        justification: 'left the church',
      });
      expect(deleted.status, deleted.text).to.equal(200);
      // Same name and guardian, another birth date: another child.
      const twin = await register('Ana Souza', '2018-11-21', 'Pedro Souza');
      const r = await report(FILE, 'dryRun=false');
      const outcome = (row: number) => r.outcomes.find((o) => o.row === row);
      expect(outcome(3)?.action).to.equal('update');
      expect(outcome(3)?.studentId).to.equal(ana);
      expect(outcome(3)?.changedFields).to.deep.equal(['allergies', 'displayName', 'phones']);
      expect(outcome(2)?.action).to.equal('create');
      expect(outcome(2)?.studentId).to.not.be.oneOf([joao, ana, twin]);
      expect((await listAll()).map((s) => s.displayName)).to.deep.equal([
        'Ana Souza',
        'Ana Souza',
        'João da Silva',
      ]);
    });

    it('createClasses creates the unknown class and stores its rows', async () => {
      const r = await report(FILE, 'dryRun=false&createClasses=true');
      expect(r.classesCreated).to.deep.equal(['Jardim']);
      expect(r.created).to.equal(3);
      const classes = await h.get(`/api/v1/classes`, ADMIN);
      expect(classes.text).to.contain('Jardim');
    });

    it('reads Windows-1252 with commas, English headers and an external id; re-import matches by that id', async () => {
      const text =
        'ID,Name,Birth date,Guardian,Phone,Class\r\nA-1,José Ávila,2019-01-02,Inês Ávila,21987654321,Maternal\r\n';
      const latin1 = Uint8Array.from([...text].map((c) => c.charCodeAt(0)));
      const first = await report(latin1, 'dryRun=false');
      expect(first.created).to.equal(1);
      expect((await listAll()).map((s) => s.displayName)).to.deep.equal(['José Ávila']);
      // The same external id with a corrected name is the same child.
      const renamed = text.replace('José Ávila', 'José de Ávila');
      const second = await report(renamed, 'dryRun=false');
      expect([second.created, second.updated]).to.deep.equal([0, 1]);
      expect(second.outcomes[0]?.studentId).to.equal(first.outcomes[0]?.studentId);
    });

    it('a UTF-8 BOM and a column mapped by the client are understood', async () => {
      const text = '\ufeffKid,Adult,Group\r\nLeo,Lia,Maternal\r\n';
      const unmapped = await upload(text, 'dryRun=true');
      const envelope = expectEnvelope(unmapped, 400, 'VALIDATION_FAILED');
      expect(issuePaths(envelope)).to.include('body.header.displayName');
      expect(envelope.details?.headers).to.deep.equal(['Kid', 'Adult', 'Group']);
      const r = await report(
        text,
        'dryRun=true&column.displayName=Kid&column.guardianName=Adult&column.className=Group',
      );
      expect(r.created).to.equal(1);
      expect(r.columns[0]).to.deep.equal({ header: 'Kid', field: 'displayName' });
    });

    it('the same Idempotency-Key replays the report; with another file it is 409', async () => {
      const key = randomUUID();
      const first = await upload(FILE, 'dryRun=false', ADMIN, key);
      const replay = await upload(FILE, 'dryRun=false', ADMIN, key);
      expect(replay.headers.get('idempotent-replayed')).to.equal('true');
      expect(replay.text).to.equal(first.text);
      expectEnvelope(
        await upload(`${FILE}\r\nX;01/01/2020;Y;;Maternal;`, 'dryRun=false', ADMIN, key),
        409,
        'IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_PAYLOAD',
      );
    });

    it('more than 10,000 rows is 413 and nothing is stored', async () => {
      const rows = Array.from({ length: 10_001 }, (_, i) => `Criança ${i};Resp ${i};Maternal`);
      const r = await upload(['Nome;Responsável;Turma', ...rows].join('\n'), 'dryRun=false');
      expectEnvelope(r, 413, 'PAYLOAD_TOO_LARGE');
      expect(await listAll()).to.deep.equal([]);
    });

    it('a broken file, a JSON body and a caller without the role are refused in the envelope', async () => {
      expectEnvelope(
        await upload('Nome;Responsável;Turma\n"Ana;Rui;Maternal\n', 'dryRun=true'),
        400,
        'VALIDATION_FAILED',
      );
      expectEnvelope(
        await upload('{}', 'dryRun=true', ADMIN, randomUUID(), 'application/json'),
        400,
        'VALIDATION_FAILED',
      );
      expectEnvelope(await upload(FILE, 'dryRun=maybe'), 400, 'VALIDATION_FAILED');
      expectEnvelope(await upload(FILE, 'dryRun=true', CHAMADOR), 403, 'FORBIDDEN_ROLE');
      expect((await upload(FILE, 'dryRun=true', CADASTRO)).status).to.equal(200);
    });

    it('each created student is audited under its id, and no cell reaches the log', async () => {
      const r = await report(FILE, 'dryRun=false');
      const id = r.outcomes[0]?.studentId ?? '';
      const audit = await h.get(`/api/v1/audit-logs?subjectId=${id}`, ADMIN);
      expect(audit.text).to.contain('/api/v1/imports/students');
      const log = h.svc.rawLog();
      for (const word of ['Silva', 'Souza', '98765', 'amendoim']) expect(log).not.to.contain(word);
    });
  });
