/** Students, image consents, audit and the data-subject export, black-box through the real app. */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { TOKENS, useService } from '../support/harness.js';
import { call, decodeAs, expectEnvelope, issuePaths } from '../support/http.js';
import { uploadTestPhoto } from '../support/photo.js';
import { authHeaders, mutate } from '../support/testService.js';

const Created = t.type({ studentId: t.string });
const Page = t.type({
  items: t.array(
    t.type({ studentId: t.string, displayName: t.string, photoRef: t.union([t.string, t.null]) }),
  ),
  nextCursor: t.union([t.string, t.null]),
});

describe('students', function () {
  this.timeout(60_000);
  const h = useService({}, 'test');
  let classId: string;
  const url = (p: string) => `${h.url}${p}`;
  const send = (method: string, path: string, body?: unknown, token: string = TOKENS.CADASTRO) =>
    mutate(url(path), method, body, token);
  const get = (path: string, token: string = TOKENS.ADMIN) =>
    call(url(path), { headers: authHeaders(token) });
  const newStudent = (over: Record<string, unknown> = {}) => ({
    displayName: 'João Pedro',
    guardianName: 'Cláudia Silva',
    phones: [{ number: '+55 11 5555-0101', qualifier: 'mãe' }],
    classId,
    ...over,
  });
  const create = async (over: Record<string, unknown> = {}): Promise<string> => {
    const r = await send('POST', '/api/v1/students', newStudent(over));
    expect(r.status, r.text).to.equal(201);
    return decodeAs(Created, r.json).studentId;
  };

  beforeEach(async () => {
    const c = await send('POST', '/api/v1/classes', { name: 'Turma A' });
    expect(c.status, c.text).to.equal(201);
    classId = decodeAs(t.type({ classId: t.string }), c.json).classId;
  });

  describe('create and change', () => {
    it('creates a student: 201, Location, every field the writer may read', async () => {
      const r = await send(
        'POST',
        '/api/v1/students',
        newStudent({ allergies: 'Amendoim', birthDate: '2019-05-04', address: { city: 'Recife' } }),
      );
      expect(r.status, r.text).to.equal(201);
      const { studentId } = decodeAs(Created, r.json);
      expect(r.headers.get('location')).to.equal(`/api/v1/students/${studentId}`);
      expect(r.json).to.deep.include({
        displayName: 'João Pedro',
        status: 'ACTIVE',
        allergies: 'Amendoim',
        birthDate: '2019-05-04',
        photoRef: null,
        deleted_justification: null,
      });
    });

    it('an unknown classId → 400 naming body.classId', async () => {
      const r = await send('POST', '/api/v1/students', newStudent({ classId: randomUUID() }));
      expect(issuePaths(expectEnvelope(r, 400, 'VALIDATION_FAILED'))).to.deep.equal(['body.classId']);
    });

    const massAssignment: ReadonlyArray<[string, unknown]> = [
      ['studentId', randomUUID()],
      ['status', 'DELETED'],
      ['updatedAt', '2020-01-01T00:00:00Z'],
      ['deleted_justification', 'none of your business'],
      ['imageConsentId', randomUUID()],
      ['visitor', true],
    ];
    for (const [field, value] of massAssignment) {
      it(`refuses the read-only field ${field} on create and on PATCH, changing nothing`, async () => {
        expectEnvelope(
          await send('POST', '/api/v1/students', newStudent({ [field]: value })),
          400,
          'VALIDATION_FAILED',
        );
        const id = await create();
        const before = await get(`/api/v1/students/${id}`);
        const r = await send('PATCH', `/api/v1/students/${id}`, { [field]: value, displayName: 'Changed' });
        expect(issuePaths(expectEnvelope(r, 400, 'VALIDATION_FAILED'))).to.include(`body.${field}`);
        expect((await get(`/api/v1/students/${id}`)).text).to.equal(before.text);
      });
    }

    it('PATCH changes only what it names; null clears an optional field', async () => {
      const id = await create({ allergies: 'Leite' });
      const r = await send('PATCH', `/api/v1/students/${id}`, {
        guardianName: 'Marcos Souza',
        allergies: null,
      });
      expect(r.status, r.text).to.equal(200);
      expect(r.json).to.deep.include({
        guardianName: 'Marcos Souza',
        allergies: null,
        displayName: 'João Pedro',
      });
    });

    it('CHAMADOR and RELATORIOS cannot create or change students (403); anonymous 401', async () => {
      expectEnvelope(
        await send('POST', '/api/v1/students', newStudent(), TOKENS.CHAMADOR),
        403,
        'FORBIDDEN_ROLE',
      );
      expectEnvelope(
        await send('POST', '/api/v1/students', newStudent(), TOKENS.RELATORIOS),
        403,
        'FORBIDDEN_ROLE',
      );
      expectEnvelope(
        await call(url('/api/v1/students'), { method: 'POST', body: '{}' }),
        401,
        'UNAUTHORIZED',
      );
    });

    it('an unknown student → 404 on read and PATCH', async () => {
      expectEnvelope(await get(`/api/v1/students/${randomUUID()}`), 404, 'NOT_FOUND');
      expectEnvelope(
        await send('PATCH', `/api/v1/students/${randomUUID()}`, { displayName: 'x' }),
        404,
        'NOT_FOUND',
      );
    });
  });

  describe('reading by role (data minimisation)', () => {
    it('ADMIN reads the address, CHAMADOR reads health notes but no address, RELATORIOS reads neither', async () => {
      const id = await create({
        allergies: 'Amendoim',
        address: { city: 'Recife' },
        birthDate: '2019-01-01',
      });
      const admin = await get(`/api/v1/students/${id}`, TOKENS.ADMIN);
      const caller = await get(`/api/v1/students/${id}`, TOKENS.CHAMADOR);
      const reports = await get(`/api/v1/students/${id}`, TOKENS.RELATORIOS);
      expect(admin.json).to.include.keys('address', 'birthDate', 'allergies');
      expect(caller.json).to.include.keys('allergies', 'guardianName', 'phones');
      expect(caller.json).not.to.have.any.keys('address', 'birthDate');
      expect(reports.json).not.to.have.any.keys('allergies', 'phones', 'guardianName', 'address', 'photoRef');
      expect(reports.json).to.include({ displayName: 'João Pedro' });
    });
  });

  describe('search and paging', () => {
    it('finds "João" by "joao", case- and accent-insensitively, with words in any order', async () => {
      await create({ displayName: 'João Pedro' });
      await create({ displayName: 'Maria Luíza' });
      for (const q of ['joao', 'JOÃO', 'pedro joao', 'luiza']) {
        const page = decodeAs(Page, (await get(`/api/v1/students?q=${encodeURIComponent(q)}`)).json);
        expect(page.items, q).to.have.length(1);
      }
    });

    it('treats regex and selector syntax in q as literal text', async () => {
      await create({ displayName: 'Ana' });
      for (const q of ['.*', '^A', '{"$gt":""}', '$regex']) {
        expect(
          decodeAs(Page, (await get(`/api/v1/students?q=${encodeURIComponent(q)}`)).json).items,
          q,
        ).to.have.length(0);
      }
      expectEnvelope(await get('/api/v1/students?q[$regex]=.*'), 400, 'VALIDATION_FAILED');
    });

    it('pages with limit and an opaque cursor; nextCursor is null at the end', async () => {
      for (const n of ['Ana', 'Bia', 'Caio', 'Davi', 'Eva']) await create({ displayName: n });
      const first = decodeAs(Page, (await get('/api/v1/students?limit=2')).json);
      expect(first.items.map((i) => i.displayName)).to.deep.equal(['Ana', 'Bia']);
      const second = decodeAs(Page, (await get(`/api/v1/students?limit=2&cursor=${first.nextCursor}`)).json);
      expect(second.items.map((i) => i.displayName)).to.deep.equal(['Caio', 'Davi']);
      const third = decodeAs(Page, (await get(`/api/v1/students?limit=2&cursor=${second.nextCursor}`)).json);
      expect(third.items.map((i) => i.displayName)).to.deep.equal(['Eva']);
      expect(third.nextCursor).to.equal(null);
    });

    it('filters by class, and a cursor belongs to its class filter', async () => {
      const other = decodeAs(
        t.type({ classId: t.string }),
        (await send('POST', '/api/v1/classes', { name: 'Jardim' })).json,
      ).classId;
      for (const n of ['Ana', 'Bia', 'Caio']) await create({ displayName: n });
      for (const n of ['Davi', 'Eva', 'Fábio']) await create({ displayName: n, classId: other });
      const first = decodeAs(Page, (await get(`/api/v1/students?classId=${other}&limit=2`)).json);
      expect(first.items.map((i) => i.displayName)).to.deep.equal(['Davi', 'Eva']);
      const second = decodeAs(
        Page,
        (await get(`/api/v1/students?classId=${other}&limit=2&cursor=${first.nextCursor}`)).json,
      );
      expect(second.items.map((i) => i.displayName)).to.deep.equal(['Fábio']);
      expectEnvelope(
        await get(`/api/v1/students?limit=2&cursor=${first.nextCursor}`),
        400,
        'VALIDATION_FAILED',
      );
      expectEnvelope(
        await get(`/api/v1/students?classId=${classId}&limit=2&cursor=${first.nextCursor}`),
        400,
        'VALIDATION_FAILED',
      );
    });

    it('refuses a forged cursor, a cursor of another query, and limits outside 1..200', async () => {
      await create({ displayName: 'Ana' });
      await create({ displayName: 'Bia' });
      const first = decodeAs(Page, (await get('/api/v1/students?limit=1')).json);
      const forged = Buffer.from(JSON.stringify({ k: '', s: 'ACTIVE', q: '' })).toString('base64url');
      for (const q of [
        `cursor=${forged}.AAAA`,
        `cursor=${first.nextCursor}x`,
        `status=DELETED&cursor=${first.nextCursor}`,
        'limit=0',
        'limit=201',
        'limit=abc',
      ]) {
        expectEnvelope(await get(`/api/v1/students?${q}`), 400, 'VALIDATION_FAILED');
      }
    });
  });

  describe('soft delete', () => {
    const justified = (n: number) => 'j'.repeat(n);
    const boundaries: ReadonlyArray<[number, number]> = [
      [9, 400],
      [10, 200],
      [500, 200],
      [501, 400],
    ];
    for (const [length, status] of boundaries) {
      it(`a justification of ${length} characters → ${status}`, async () => {
        const id = await create();
        const r = await send(
          'POST',
          `/api/v1/students/${id}/delete`,
          { justification: justified(length) },
          TOKENS.ADMIN,
        );
        expect(r.status, r.text).to.equal(status);
        if (status === 400)
          expect(issuePaths(expectEnvelope(r, 400, 'VALIDATION_FAILED'))).to.deep.equal([
            'body.justification',
          ]);
      });
    }

    it('sets DELETED and the justification, removes nothing, appends SOFT_DELETE; a second delete → 409', async () => {
      const id = await create();
      const r = await send(
        'POST',
        `/api/v1/students/${id}/delete`,
        { justification: 'Mudou de cidade com a família' },
        TOKENS.ADMIN,
      );
      expect(r.json).to.deep.include({
        status: 'DELETED',
        deleted_justification: 'Mudou de cidade com a família',
      });
      expectEnvelope(
        await send(
          'POST',
          `/api/v1/students/${id}/delete`,
          { justification: 'again, for good measure' },
          TOKENS.ADMIN,
        ),
        409,
        'CONFLICT',
      );
      expect((await get(`/api/v1/students/${id}`)).status).to.equal(200);
      const deleted = decodeAs(Page, (await get('/api/v1/students?status=DELETED')).json);
      expect(deleted.items.map((i) => i.studentId)).to.deep.equal([id]);
      expect(decodeAs(Page, (await get('/api/v1/students')).json).items).to.have.length(0);
      const events = await h.svc.store.db.events.find({ selector: { subjectId: id, type: 'SOFT_DELETE' } });
      expect(events.docs).to.have.length(1);
    });

    it('only ADMIN deletes: CADASTRO → 403', async () => {
      const id = await create();
      expectEnvelope(
        await send('POST', `/api/v1/students/${id}/delete`, { justification: 'long enough reason' }),
        403,
        'FORBIDDEN_ROLE',
      );
    });
  });

  describe('photos and image consents', () => {
    const consent = (studentId: string) => ({
      subject_type: 'STUDENT',
      subject_id: studentId,
      term_version: '2026-01',
      purpose: 'Fotos no mural da igreja',
      term_text: 'Autorizo o uso da imagem…',
      granted_by_name: 'Cláudia Silva',
      relationship: 'mãe',
      verification_method: 'VERIFIED_GUARDIAN_PRESENT',
    });

    it('refuses a photo without consent, accepts the stored one with one, stops serving it once revoked', async () => {
      const id = await create();
      const noConsent = await send('PATCH', `/api/v1/students/${id}`, { photoRef: 'photos/joao.jpg' });
      expect(expectEnvelope(noConsent, 400, 'VALIDATION_FAILED').details).to.deep.include({
        reason: 'NO_ACTIVE_IMAGE_CONSENT',
      });
      expectEnvelope(
        await send('POST', '/api/v1/students', newStudent({ photoRef: 'photos/x.jpg' })),
        400,
        'VALIDATION_FAILED',
      );
      const c = await send('POST', '/api/v1/image-consents', consent(id));
      expect(c.status, c.text).to.equal(201);
      const consentId = decodeAs(t.type({ consentId: t.string }), c.json).consentId;
      const stored = await uploadTestPhoto(h.url, id, authHeaders(TOKENS.CADASTRO));
      expect((await send('PATCH', `/api/v1/students/${id}`, { photoRef: null })).status).to.equal(200);
      expect((await send('PATCH', `/api/v1/students/${id}`, { photoRef: stored })).status).to.equal(200);
      expect((await get(`/api/v1/students/${id}`)).json).to.deep.include({
        photoRef: stored,
        imageConsentId: consentId,
      });
      expect(decodeAs(Page, (await get('/api/v1/students')).json).items[0]?.photoRef).to.equal(stored);
      const revoked = await send(
        'POST',
        `/api/v1/image-consents/${consentId}/revoke`,
        { revocation_reason: 'A mãe pediu' },
        TOKENS.ADMIN,
      );
      expect(revoked.status, revoked.text).to.equal(200);
      expect(revoked.json).to.deep.include({ revocation_reason: 'A mãe pediu' });
      expect((await get(`/api/v1/students/${id}`)).json).to.deep.include({ photoRef: null });
      expect(decodeAs(Page, (await get('/api/v1/students')).json).items[0]?.photoRef).to.equal(null);
      expectEnvelope(
        await send('PATCH', `/api/v1/students/${id}`, { photoRef: 'photos/new.jpg' }),
        400,
        'VALIDATION_FAILED',
      );
    });

    it('refuses a photo reference that names no photo stored for the child, by its path, and changes nothing', async () => {
      const id = await create();
      const other = await create({ displayName: 'Ana Clara' });
      for (const s of [id, other])
        expect((await send('POST', '/api/v1/image-consents', consent(s))).status).to.equal(201);
      const theirs = await uploadTestPhoto(h.url, other, authHeaders(TOKENS.CADASTRO));
      const refused = await send('PATCH', `/api/v1/students/${id}`, {
        displayName: 'João P.',
        photoRef: 'photos/invented.jpg',
        photo_refs: [theirs],
      });
      const envelope = expectEnvelope(refused, 400, 'VALIDATION_FAILED');
      expect(envelope.details).to.deep.include({ reason: 'PHOTO_NOT_STORED' });
      expect(issuePaths(envelope)).to.deep.equal(['body.photoRef', 'body.photo_refs.0']);
      expect((await get(`/api/v1/students/${id}`)).json).to.deep.include({
        displayName: 'João Pedro',
        photoRef: null,
        photo_refs: [],
      });
      // The child's own stored photo, sent back with the record unchanged, is accepted.
      const mine = await uploadTestPhoto(h.url, id, authHeaders(TOKENS.CADASTRO));
      const resent = await send('PATCH', `/api/v1/students/${id}`, {
        displayName: 'João P.',
        photoRef: mine,
        photo_refs: [mine],
      });
      expect(resent.status, resent.text).to.equal(200);
      expect(resent.json).to.deep.include({ displayName: 'João P.', photoRef: mine });
    });

    it('keeps the full history; a second revoke → 409; re-consent is a new record', async () => {
      const id = await create();
      const first = decodeAs(
        t.type({ consentId: t.string }),
        (await send('POST', '/api/v1/image-consents', consent(id))).json,
      ).consentId;
      await send('POST', `/api/v1/image-consents/${first}/revoke`, { reason: 'pedido' }, TOKENS.ADMIN);
      expectEnvelope(
        await send('POST', `/api/v1/image-consents/${first}/revoke`, { reason: 'again' }, TOKENS.ADMIN),
        409,
        'CONFLICT',
      );
      const second = decodeAs(
        t.type({ consentId: t.string }),
        (await send('POST', '/api/v1/image-consents', { ...consent(id), term_version: '2026-02' })).json,
      ).consentId;
      const h = await get(`/api/v1/image-consents?subjectType=STUDENT&subjectId=${id}`);
      const history = decodeAs(
        t.type({
          current: t.type({ consentId: t.string }),
          history: t.array(t.type({ consentId: t.string, revoked_at: t.union([t.string, t.null]) })),
        }),
        h.json,
      );
      expect(history.current.consentId).to.equal(second);
      expect(history.history.map((c) => c.consentId)).to.have.members([first, second]);
      expect(history.history.find((c) => c.consentId === first)?.revoked_at).to.be.a('string');
      expect(history.history.find((c) => c.consentId === second)?.revoked_at).to.equal(null);
    });

    it("revocation takes the spec's `revocation_reason`; the deprecated `reason` still works; both or neither → 400", async () => {
      const id = await create();
      const consentOf = async () =>
        decodeAs(
          t.type({ consentId: t.string }),
          (await send('POST', '/api/v1/image-consents', consent(id))).json,
        ).consentId;
      const revoke = (c: string, body: unknown) =>
        send('POST', `/api/v1/image-consents/${c}/revoke`, body, TOKENS.ADMIN);
      const c = await consentOf();
      for (const body of [
        { revocation_reason: 'A mãe pediu', reason: 'A mãe pediu' },
        {},
        { revocation_reason: 'x' },
        { reason: 'x' },
      ]) {
        expectEnvelope(await revoke(c, body), 400, 'VALIDATION_FAILED');
      }
      const legacy = await revoke(c, { reason: 'Pedido do pai' });
      expect(legacy.status, legacy.text).to.equal(200);
      expect(legacy.json).to.deep.include({ revocation_reason: 'Pedido do pai' });
      const current = await revoke(await consentOf(), { revocation_reason: 'Pedido da mãe' });
      expect(current.status, current.text).to.equal(200);
      expect(current.json).to.deep.include({ revocation_reason: 'Pedido da mãe' });
    });

    it('only ADMIN revokes; a consent for an unknown subject → 400', async () => {
      const id = await create();
      const c = decodeAs(
        t.type({ consentId: t.string }),
        (await send('POST', '/api/v1/image-consents', consent(id))).json,
      ).consentId;
      expectEnvelope(
        await send('POST', `/api/v1/image-consents/${c}/revoke`, { reason: 'pedido' }),
        403,
        'FORBIDDEN_ROLE',
      );
      expectEnvelope(
        await send('POST', '/api/v1/image-consents', consent(randomUUID())),
        400,
        'VALIDATION_FAILED',
      );
    });
  });

  describe('audit and export', () => {
    const AuditPage = t.type({
      items: t.array(
        t.type({
          endpoint: t.string,
          outcome: t.string,
          action: t.string,
          actor_user_id: t.union([t.string, t.null]),
          subject_id: t.union([t.string, t.null]),
        }),
      ),
      nextCursor: t.union([t.string, t.null]),
    });

    it('audits mutations (success and failure) and sensitive reads, never with personal data', async () => {
      const id = await create({ allergies: 'Amendoim' });
      await send('PATCH', `/api/v1/students/${id}`, { displayName: '' });
      await get(`/api/v1/students/${id}`, TOKENS.CHAMADOR);
      await h.svc.deps.audit.flush();
      const page = decodeAs(AuditPage, (await get(`/api/v1/audit-logs?subjectId=${id}`)).json);
      const seen = page.items.map((i) => `${i.action} ${i.endpoint} ${i.outcome}`);
      expect(seen).to.include.members([
        'MUTATION POST /api/v1/students SUCCESS',
        'MUTATION PATCH /api/v1/students/{studentId} FAILURE',
        'READ_SENSITIVE GET /api/v1/students/{studentId} SUCCESS',
      ]);
      const raw = JSON.stringify((await h.svc.store.db.audit.allDocs({ include_docs: true })).rows);
      expect(raw).not.to.contain('João').and.not.to.contain('Amendoim').and.not.to.contain('5555-0101');
    });

    it('filters the audit log and refuses it to non-ADMINs', async () => {
      await create();
      await h.svc.deps.audit.flush();
      const page = decodeAs(
        AuditPage,
        (await get('/api/v1/audit-logs?outcome=SUCCESS&actor=dev-cadastro')).json,
      );
      expect(page.items.length).to.be.greaterThan(0);
      expect(page.items.every((i) => i.outcome === 'SUCCESS' && i.actor_user_id === 'dev-cadastro')).to.equal(
        true,
      );
      expectEnvelope(await get('/api/v1/audit-logs', TOKENS.CADASTRO), 403, 'FORBIDDEN_ROLE');
      expectEnvelope(await get('/api/v1/audit-logs?cursor=nope'), 400, 'VALIDATION_FAILED');
    });

    it('exports everything held about a student, and the export is itself audited', async () => {
      const id = await create({ address: { city: 'Recife' } });
      await send('POST', '/api/v1/image-consents', {
        subject_type: 'STUDENT',
        subject_id: id,
        term_version: '1',
        purpose: 'mural',
        term_text: 'texto',
        granted_by_name: 'Cláudia',
        relationship: 'mãe',
        verification_method: 'IN_PERSON_DOCUMENT',
      });
      await h.svc.deps.audit.flush();
      const r = await get(`/api/v1/students/${id}/export`);
      expect(r.status, r.text).to.equal(200);
      const body = decodeAs(
        t.type({
          student: t.type({ studentId: t.string, address: t.unknown }),
          imageConsents: t.array(t.unknown),
          events: t.array(t.type({ type: t.string })),
          auditEntries: t.array(t.unknown),
        }),
        r.json,
      );
      expect(body.student.studentId).to.equal(id);
      expect(body.imageConsents).to.have.length(1);
      expect(body.events.map((e) => e.type)).to.include.members(['STUDENT_CREATED', 'IMAGE_CONSENT_GRANTED']);
      expect(body.auditEntries.length).to.be.greaterThan(0);
      expectEnvelope(await get(`/api/v1/students/${id}/export`, TOKENS.CADASTRO), 403, 'FORBIDDEN_ROLE');
      await h.svc.deps.audit.flush();
      const audits = decodeAs(AuditPage, (await get(`/api/v1/audit-logs?subjectId=${id}`)).json);
      expect(audits.items.map((i) => i.action)).to.include('EXPORT');
    });
  });
});

describe('student export of an unknown student', () => {
  const h = useService();
  it('→ 404', async () => {
    expectEnvelope(await h.get(`/api/v1/students/${randomUUID()}/export`), 404, 'NOT_FOUND');
  });
});
