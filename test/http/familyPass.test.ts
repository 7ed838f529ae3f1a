/**
 * The family pass (decision 0049), black-box through the real app: the card as SVG and PNG with a QR
 * code an independent decoder (jsQR) reads back, what the card shows and does not, the errors, who may
 * do what, audit, and revocation reaching a tablet through its roster pull.
 */
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import sharp from 'sharp';
import { sha256 } from '../../src/crypto/bytes.js';
import { RosterFamily, RosterFamilyPasses } from '../../src/domain/roster.js';
import { type PassBook, verifyFamilyPass } from '../../src/rules/familyPass.js';
import { TOKENS, useService } from '../support/harness.js';
import { call, decodeAs, expectEnvelope } from '../support/http.js';
import { qrTextOf } from '../support/qr.js';
import { makeTablet, type Tablet } from '../support/tablet.js';
import { authHeaders, mutate, mutationHeaders } from '../support/testService.js';

const { ADMIN, CADASTRO, CHAMADOR } = TOKENS;
const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

const qrText = (image: Uint8Array) => qrTextOf(image);

const Issued = t.type({ studentId: t.string, generation: t.number, issuedAt: t.string });
const Content = t.type({ studentId: t.string, content: t.string });

describe('family pass', function () {
  this.timeout(90_000);
  let tablet: Tablet;
  // Before the service's own: the tablet lets go of the service before it stops.
  afterEach(() => tablet.close());
  const h = useService({}, 'test');
  let classId: string;
  const url = (p: string) => `${h.url}${p}`;
  const get = (path: string, token: string = ADMIN) => call(url(path), { headers: authHeaders(token) });
  const bytes = async (path: string, token: string = CADASTRO) => {
    const res = await fetch(url(path), { headers: authHeaders(token) });
    expect(res.status).to.equal(200);
    return { type: res.headers.get('content-type'), body: new Uint8Array(await res.arrayBuffer()) };
  };
  const child = async (displayName: string, guardianName: string, phones: string[]) => {
    const r = await mutate(
      url('/api/v1/students'),
      'POST',
      { displayName, guardianName, phones: phones.map((number) => ({ number, qualifier: 'mãe' })), classId },
      CADASTRO,
    );
    expect(r.status, r.text).to.equal(201);
    return decodeAs(t.type({ studentId: t.string }), r.json).studentId;
  };
  const pass = (studentId: string, token: string = CHAMADOR) =>
    get(`/api/v1/students/${studentId}/family-pass/content`, token).then(
      (r) => decodeAs(Content, r.json).content,
    );
  const revoke = (studentId: string, key?: string, token: string = ADMIN) =>
    call(url(`/api/v1/students/${studentId}/family-pass/revoke`), {
      method: 'POST',
      headers: mutationHeaders(token, key),
    });
  /** The passes a tablet holds after a pull, as the rule reads them. */
  const tabletBook = async (): Promise<PassBook> => {
    await h.svc.deps.sync.pipeline.catchUp();
    await h.svc.deps.replication.reconciler.refresh();
    await tablet.pull();
    const families = [...(await tablet.docs('rosterFamily')).values()].map((d) => decodeAs(RosterFamily, d));
    const issuer = [...(await tablet.docs('rosterFamilyPasses')).values()].map(
      (d) => decodeAs(RosterFamilyPasses, d).issuer,
    );
    return { issuer: issuer[0], families };
  };

  beforeEach(async () => {
    tablet = makeTablet(h.url, CHAMADOR);
    const c = await mutate(url('/api/v1/classes'), 'POST', { name: 'Turma A' }, ADMIN);
    expect(c.status, c.text).to.equal(201);
    classId = decodeAs(t.type({ classId: t.string }), c.json).classId;
  });

  it('the card is an SVG whose QR code reads back as the pass, naming first names and nothing else personal', async () => {
    const helena = await child('Helena Prado', 'Rita Prado', ['+55 11 91234-5678']);
    await child('Caio Prado', 'Rita Prado', ['(11) 91234-5678', '+55 11 3333-4444']);
    await child('Outro Lima', 'Ana Lima', ['+55 21 97777-1111']);
    await h.svc.deps.replication.reconciler.refresh();
    const r = await get(`/api/v1/students/${helena}/family-pass`, CADASTRO);
    expect(r.status, r.text).to.equal(200);
    expect(r.headers.get('content-type')).to.match(/^image\/svg\+xml/);
    expect(r.headers.get('cache-control')).to.equal('no-store');
    const svg = r.text;
    expect(svg).to.match(/^<\?xml[^>]*>\s*<svg /);
    for (const shown of ['Rita', 'Helena', 'Caio']) expect(svg).to.contain(shown);
    for (const hidden of ['Prado', 'Outro', 'Ana', '1234', '5678', '9123', '3333'])
      expect(svg).not.to.contain(hidden);
    const read = await qrText(new TextEncoder().encode(svg));
    expect(read).to.match(/^CHAMADA:FP1:[A-Z2-7]{8}:[A-Z2-7]{26}$/);
    expect(read).to.equal(await pass(helena));
  });

  it('with format=png the card is a PNG whose QR code reads back as the same pass', async () => {
    const helena = await child('Helena Prado', 'Rita Prado', ['+55 11 91234-5678']);
    const png = await bytes(`/api/v1/students/${helena}/family-pass?format=png`);
    expect(png.type).to.equal('image/png');
    expect([...png.body.subarray(0, 8)]).to.deep.equal(PNG_MAGIC);
    const { width, height, density } = await sharp(Buffer.from(png.body)).metadata();
    // 85.6 × 54 mm at 300 dpi, and it says so.
    expect([width, height, density]).to.deep.equal([1011, 638, 300]);
    expect(await qrText(png.body)).to.equal(await pass(helena));
    // The contract documents both media types.
    expect((await get(`/api/v1/students/${helena}/family-pass?format=png`)).status).to.equal(200);
    expectEnvelope(await get(`/api/v1/students/${helena}/family-pass?format=gif`), 400, 'VALIDATION_FAILED');
  });

  it('siblings share one pass; another family has another', async () => {
    const helena = await child('Helena', 'Rita Prado', ['+55 11 91234-5678']);
    const caio = await child('Caio', 'Rita Prado', ['11 91234-5678']);
    const outro = await child('Outro', 'Ana Lima', ['+55 21 97777-1111']);
    expect(await pass(caio)).to.equal(await pass(helena));
    expect(await pass(outro)).not.to.equal(await pass(helena));
  });

  it('404 for an unknown child, 409 NO_FAMILY without a guardian phone, 409 for a deleted child', async () => {
    expectEnvelope(await get('/api/v1/students/no-such-child/family-pass'), 404, 'NOT_FOUND');
    expectEnvelope(await get('/api/v1/students/no-such-child/family-pass/content'), 404, 'NOT_FOUND');
    expectEnvelope(await revoke('no-such-child'), 404, 'NOT_FOUND');
    const alone = await child('Sem Telefone', 'Rita', []);
    const short = await child('Telefone Curto', 'Rita', ['123-45']);
    for (const id of [alone, short]) {
      expectEnvelope(await get(`/api/v1/students/${id}/family-pass`), 409, 'NO_FAMILY');
      expectEnvelope(await get(`/api/v1/students/${id}/family-pass/content`), 409, 'NO_FAMILY');
      expectEnvelope(await revoke(id), 409, 'NO_FAMILY');
    }
    const gone = await child('Saiu', 'Rita', ['11 95555-0000']);
    const deleted = await mutate(
      url(`/api/v1/students/${gone}/delete`),
      'POST',
      { justification: 'Mudou de cidade com a família' },
      ADMIN,
    );
    expect(deleted.status, deleted.text).to.equal(200);
    expect(
      expectEnvelope(await get(`/api/v1/students/${gone}/family-pass`), 409, 'CONFLICT').details,
    ).to.deep.equal({
      reason: 'STUDENT_DELETED',
    });
  });

  it('the card is for ADMIN and CADASTRO, the stub’s text for ADMIN and CHAMADOR, revocation for ADMIN only', async () => {
    const id = await child('Helena', 'Rita Prado', ['+55 11 91234-5678']);
    const card = `/api/v1/students/${id}/family-pass`;
    expect((await get(card, ADMIN)).status).to.equal(200);
    expect((await get(card, CADASTRO)).status).to.equal(200);
    expectEnvelope(await get(card, CHAMADOR), 403, 'FORBIDDEN_ROLE');
    expectEnvelope(await get(card, TOKENS.RELATORIOS), 403, 'FORBIDDEN_ROLE');
    expectEnvelope(await call(url(card)), 401, 'UNAUTHORIZED');
    expect((await get(`${card}/content`, ADMIN)).status).to.equal(200);
    expectEnvelope(await get(`${card}/content`, CADASTRO), 403, 'FORBIDDEN_ROLE');
    expectEnvelope(await revoke(id, undefined, CADASTRO), 403, 'FORBIDDEN_ROLE');
    expectEnvelope(await revoke(id, undefined, CHAMADOR), 403, 'FORBIDDEN_ROLE');
    const noKey = await call(url(`${card}/revoke`), { method: 'POST', headers: authHeaders(ADMIN) });
    expectEnvelope(noKey, 400, 'VALIDATION_FAILED');
  });

  it('revocation is idempotent by its key and audited; a new key replaces the pass again', async () => {
    const id = await child('Helena', 'Rita Prado', ['+55 11 91234-5678']);
    const key = crypto.randomUUID();
    const first = await revoke(id, key);
    expect(first.status, first.text).to.equal(200);
    const again = await revoke(id, key);
    expect(again.status).to.equal(200);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.json).to.deep.equal(first.json);
    expect(decodeAs(Issued, first.json).generation).to.equal(1);
    expect(decodeAs(Issued, (await revoke(id)).json).generation).to.equal(2);
    expect((await get(`/api/v1/students/${id}/family-pass`, CADASTRO)).status).to.equal(200);
    await h.svc.deps.audit.flush();
    const page = decodeAs(
      t.type({ items: t.array(t.type({ endpoint: t.string, action: t.string, outcome: t.string })) }),
      (await get(`/api/v1/audit-logs?subjectId=${id}`)).json,
    );
    const entries = (endpoint: string, action: string) =>
      page.items.filter((i) => i.endpoint === endpoint && i.action === action && i.outcome === 'SUCCESS');
    // Two revocations and the replay: every mutation request is audited, a replay too.
    expect(entries('POST /api/v1/students/{studentId}/family-pass/revoke', 'MUTATION')).to.have.length(3);
    expect(entries('GET /api/v1/students/{studentId}/family-pass', 'READ_SENSITIVE')).to.have.length(1);
  });

  it('after a revocation a tablet’s next pull refuses the old pass and accepts the new one', async () => {
    const helena = await child('Helena', 'Rita Prado', ['+55 11 91234-5678']);
    const caio = await child('Caio', 'Rita Prado', ['11 91234-5678']);
    const old = await qrText((await bytes(`/api/v1/students/${helena}/family-pass?format=png`)).body);
    if (old === undefined) throw new Error('the card has no readable QR code');
    const before = await tabletBook();
    const accepted = verifyFamilyPass(old, before, sha256);
    expect(E.isRight(accepted) && [...accepted.right.studentIds].sort()).to.deep.equal([helena, caio].sort());
    expect(E.isRight(accepted) && accepted.right.guardianName).to.equal('Rita');

    expect((await revoke(caio)).status).to.equal(200);
    // Not before the pull: the tablet still holds the roster it had.
    expect(E.isRight(verifyFamilyPass(old, before, sha256))).to.equal(true);
    const after = await tabletBook();
    expect(verifyFamilyPass(old, after, sha256)).to.deep.equal(E.left('REVOKED'));
    const renewed = await qrText((await bytes(`/api/v1/students/${helena}/family-pass?format=png`)).body);
    expect(renewed).not.to.equal(old);
    const now = verifyFamilyPass(renewed ?? '', after, sha256);
    expect(E.isRight(now) && [...now.right.studentIds].sort()).to.deep.equal([helena, caio].sort());
    // The tablet holds hashes, never a pass.
    const held = JSON.stringify(after);
    for (const p of [old, renewed ?? '']) expect(held).not.to.contain(p.split(':')[3]);
  });
});
