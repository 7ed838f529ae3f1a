/**
 * Students' photos (decision 0033), black-box through the real app: formats, the size limit, bytes
 * that are no image, the consent rule on upload and on every read, revocation erasing the photo from
 * reads and from the tablets' roster, roles, audit.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import sharp, { type Sharp } from 'sharp';
import { TOKENS, useService } from '../support/harness.js';
import { call, decodeAs, expectEnvelope } from '../support/http.js';
import { authHeaders, mutate, mutationHeaders } from '../support/testService.js';

const StoredPhoto = t.type({
  studentId: t.string,
  photoRef: t.string,
  contentType: t.literal('image/jpeg'),
  width: t.number,
  height: t.number,
  thumbWidth: t.number,
  thumbHeight: t.number,
  consentId: t.string,
});

/** A test picture: squares of colour, so the encoder has something to encode and a PNG stays small. */
const picture = (width: number, height: number): Sharp => {
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y += 1)
    for (let x = 0; x < width; x += 1) {
      const i = (y * width + x) * 3;
      pixels[i] = ((x >> 5) * 37) % 256;
      pixels[i + 1] = ((y >> 5) * 53) % 256;
      pixels[i + 2] = 128;
    }
  return sharp(pixels, { raw: { width, height, channels: 3 } });
};

describe('student photos', function () {
  this.timeout(90_000);
  const h = useService({}, 'test');
  let classId: string;
  const url = (p: string) => `${h.url}${p}`;
  const send = (method: string, path: string, body: unknown, token: string = TOKENS.ADMIN) =>
    mutate(url(path), method, body, token);
  const get = (path: string, token: string = TOKENS.ADMIN) =>
    call(url(path), { headers: authHeaders(token) });
  const upload = (
    studentId: string,
    bytes: Uint8Array | Buffer,
    type: string,
    token: string = TOKENS.CADASTRO,
  ) =>
    call(url(`/api/v1/students/${studentId}/photo`), {
      method: 'PUT',
      headers: { ...mutationHeaders(token), 'Content-Type': type },
      body: new Blob([new Uint8Array(bytes)]),
    });
  /** The image bytes of a successful read (the contract check of `call` reads the answer as text). */
  const image = async (studentId: string, query = '', token: string = TOKENS.ADMIN) => {
    const res = await fetch(url(`/api/v1/students/${studentId}/photo${query}`), {
      headers: authHeaders(token),
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('image/jpeg');
    expect(res.headers.get('cache-control')).to.equal('no-store');
    return new Uint8Array(await res.arrayBuffer());
  };
  const student = async (over: Record<string, unknown> = {}) => {
    const r = await send(
      'POST',
      '/api/v1/students',
      { displayName: 'Ana Lima', guardianName: 'Rita Lima', phones: [], classId, ...over },
      TOKENS.CADASTRO,
    );
    expect(r.status, r.text).to.equal(201);
    return decodeAs(t.type({ studentId: t.string }), r.json).studentId;
  };
  const consent = async (studentId: string) => {
    const r = await send('POST', '/api/v1/image-consents', {
      subject_type: 'STUDENT',
      subject_id: studentId,
      term_version: '2026-01',
      purpose: 'Identificar a criança na entrega',
      term_text: 'Autorizo o uso da foto do meu filho na identificação da entrega.',
      granted_by_name: 'Rita Lima',
      relationship: 'mãe',
      verification_method: 'VERIFIED_GUARDIAN_PRESENT',
    });
    expect(r.status, r.text).to.equal(201);
    return decodeAs(t.type({ consentId: t.string }), r.json).consentId;
  };
  const revoke = (consentId: string) =>
    send('POST', `/api/v1/image-consents/${consentId}/revoke`, { revocation_reason: 'A mãe pediu' });
  const rosterDoc = async (id: string) => {
    await h.svc.deps.replication.reconciler.refresh();
    return h.svc.store.db.roster.get(id).then(
      (d) => d,
      () => undefined,
    );
  };

  beforeEach(async () => {
    const c = await send('POST', '/api/v1/classes', { name: 'Turma A' });
    expect(c.status, c.text).to.equal(201);
    classId = decodeAs(t.type({ classId: t.string }), c.json).classId;
  });

  it('without an active image consent: 400 VALIDATION_FAILED with the reason, and nothing is stored', async () => {
    const id = await student();
    const jpeg = await picture(64, 64).jpeg().toBuffer();
    const refused = expectEnvelope(await upload(id, jpeg, 'image/jpeg'), 400, 'VALIDATION_FAILED');
    expect(refused.details).to.deep.include({ reason: 'NO_ACTIVE_IMAGE_CONSENT' });
    expect(refused.details).to.have.nested.property('issues[0].path', 'body');
    expect(refused.message).to.contain('image consent');
    expect(await h.svc.store.db.private.get(`photo:${id}`).catch(() => undefined)).to.equal(undefined);
    expect((await get(`/api/v1/students/${id}`)).json).to.deep.include({ photoRef: null, photo_refs: [] });
    expectEnvelope(await get(`/api/v1/students/${id}/photo`), 409, 'CONFLICT');
  });

  for (const [type, make] of [
    ['image/jpeg', (p: Sharp) => p.jpeg()],
    ['image/png', (p: Sharp) => p.png()],
    ['image/webp', (p: Sharp) => p.webp()],
  ] as const) {
    it(`stores a ${type} re-encoded as JPEG of at most 1024 px, with a 256 px thumbnail`, async () => {
      const id = await student();
      const consentId = await consent(id);
      const sent = await make(picture(2000, 1500)).toBuffer();
      const r = await upload(id, sent, type);
      expect(r.status, r.text).to.equal(200);
      const stored = decodeAs(StoredPhoto, r.json);
      expect(stored).to.deep.include({
        studentId: id,
        consentId,
        width: 1024,
        height: 768,
        thumbWidth: 256,
        thumbHeight: 192,
      });
      const full = await image(id);
      expect([...full.slice(0, 3)]).to.deep.equal([0xff, 0xd8, 0xff]);
      expect(await sharp(full).metadata()).to.deep.include({ format: 'jpeg', width: 1024, height: 768 });
      const thumb = await image(id, '?size=thumb');
      expect(await sharp(thumb).metadata()).to.deep.include({ format: 'jpeg', width: 256, height: 192 });
      expect(Buffer.from(full).equals(sent)).to.equal(false);
      // The key is the student's photoRef and only photo_refs entry.
      expect((await get(`/api/v1/students/${id}`)).json).to.deep.include({
        photoRef: stored.photoRef,
        photo_refs: [stored.photoRef],
      });
    });
  }

  it('never serves what was sent: EXIF and GPS are gone, the picture is turned upright', async () => {
    const id = await student();
    await consent(id);
    // Orientation 6: the camera was turned; the upright picture is 300 wide and 400 high.
    const sent = await picture(400, 300)
      .jpeg()
      .withMetadata({ orientation: 6, exif: { IFD0: { Copyright: 'segredo' } } })
      .toBuffer();
    expect((await sharp(sent).metadata()).exif).to.not.equal(undefined);
    expect((await upload(id, sent, 'image/jpeg')).status).to.equal(200);
    const meta = await sharp(await image(id)).metadata();
    expect(meta).to.deep.include({ width: 300, height: 400 });
    expect(meta.exif).to.equal(undefined);
    expect(meta.orientation).to.equal(undefined);
  });

  it('refuses what is not a JPEG, PNG or WebP image (415), and a body over 5 MB (413), storing nothing', async () => {
    const id = await student();
    await consent(id);
    const notImage = expectEnvelope(
      await upload(id, new TextEncoder().encode('definitely not a picture'), 'image/png'),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expect(notImage.details).to.deep.equal({ reason: 'NOT_AN_IMAGE' });
    const gif = await picture(32, 32).gif().toBuffer();
    expect(
      expectEnvelope(await upload(id, gif, 'image/png'), 415, 'UNSUPPORTED_MEDIA_TYPE').details,
    ).to.deep.equal({ reason: 'FORMAT_NOT_ACCEPTED' });
    const svg = new TextEncoder().encode(
      '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>',
    );
    expectEnvelope(await upload(id, svg, 'image/png'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    const truncated = (await picture(256, 256).jpeg().toBuffer()).subarray(0, 400);
    expectEnvelope(await upload(id, truncated, 'image/jpeg'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    const big = new Uint8Array(5 * 1024 * 1024 + 1);
    expectEnvelope(await upload(id, big, 'image/jpeg'), 413, 'PAYLOAD_TOO_LARGE');
    // Another media type is not read as an image at all.
    expectEnvelope(
      await upload(id, await picture(8, 8).jpeg().toBuffer(), 'text/plain'),
      400,
      'VALIDATION_FAILED',
    );
    expectEnvelope(await get(`/api/v1/students/${id}/photo`), 404, 'NOT_FOUND');
    expect((await get(`/api/v1/students/${id}`)).json).to.deep.include({ photoRef: null });
  });

  it('answers 404 for an unknown student, and 409 for a deleted one', async () => {
    const jpeg = await picture(16, 16).jpeg().toBuffer();
    expectEnvelope(await upload(randomUUID(), jpeg, 'image/jpeg'), 404, 'NOT_FOUND');
    expectEnvelope(await get(`/api/v1/students/${randomUUID()}/photo`), 404, 'NOT_FOUND');
    const id = await student();
    await consent(id);
    const del = await send('POST', `/api/v1/students/${id}/delete`, { justification: 'Mudou de igreja.' });
    expect(del.status, del.text).to.equal(200);
    expectEnvelope(await upload(id, jpeg, 'image/jpeg'), 409, 'CONFLICT');
  });

  it('serves the photo to the roles that read photos, and audits each read', async () => {
    const id = await student();
    await consent(id);
    expect((await upload(id, await picture(300, 300).png().toBuffer(), 'image/png')).status).to.equal(200);
    await image(id, '', TOKENS.CHAMADOR);
    await image(id, '?size=thumb', TOKENS.CADASTRO);
    expectEnvelope(await get(`/api/v1/students/${id}/photo`, TOKENS.RELATORIOS), 403, 'FORBIDDEN_ROLE');
    expectEnvelope(await get(`/api/v1/students/${id}/photo?size=huge`), 400, 'VALIDATION_FAILED');
    // Storing a photo is a CADASTRO or ADMIN task.
    expectEnvelope(
      await upload(id, await picture(8, 8).jpeg().toBuffer(), 'image/jpeg', TOKENS.CHAMADOR),
      403,
      'FORBIDDEN_ROLE',
    );
    await h.svc.deps.audit.flush();
    const page = decodeAs(
      t.type({ items: t.array(t.type({ endpoint: t.string, action: t.string, outcome: t.string })) }),
      (await get(`/api/v1/audit-logs?subjectId=${id}`)).json,
    );
    const photoEntries = page.items.filter((i) => i.endpoint.endsWith('/photo'));
    expect(
      photoEntries.filter((i) => i.action === 'READ_SENSITIVE' && i.outcome === 'SUCCESS'),
    ).to.have.length(2);
    expect(photoEntries.filter((i) => i.action === 'MUTATION' && i.outcome === 'SUCCESS')).to.have.length(1);
  });

  it('the data-subject export holds the stored photo itself, and none once consent is revoked', async () => {
    const id = await student();
    const consentId = await consent(id);
    const stored = decodeAs(
      StoredPhoto,
      (await upload(id, await picture(200, 100).jpeg().toBuffer(), 'image/jpeg')).json,
    );
    const Export = t.type({
      photo: t.union([t.type({ stored: t.type({ photoRef: t.string }), jpegBase64: t.string }), t.null]),
    });
    const held = decodeAs(Export, (await get(`/api/v1/students/${id}/export`)).json).photo;
    expect(held?.stored.photoRef).to.equal(stored.photoRef);
    expect(Buffer.from(held?.jpegBase64 ?? '', 'base64').equals(Buffer.from(await image(id)))).to.equal(true);
    expect((await revoke(consentId)).status).to.equal(200);
    expect(decodeAs(Export, (await get(`/api/v1/students/${id}/export`)).json).photo).to.equal(null);
  });

  it('revoking one of two active consents keeps the photo; revoking the last erases it', async () => {
    const id = await student();
    const first = await consent(id);
    const second = await consent(id);
    expect((await upload(id, await picture(64, 64).jpeg().toBuffer(), 'image/jpeg')).status).to.equal(200);
    expect((await revoke(first)).status).to.equal(200);
    await image(id, '?size=thumb');
    expect((await revoke(second)).status).to.equal(200);
    expectEnvelope(await get(`/api/v1/students/${id}/photo?size=thumb`), 409, 'CONFLICT');
    expect(await h.svc.store.db.private.get(`photo:${id}`).catch(() => undefined)).to.equal(undefined);
  });

  it('a photo the record no longer names is not served', async () => {
    const id = await student();
    await consent(id);
    expect((await upload(id, await picture(64, 64).jpeg().toBuffer(), 'image/jpeg')).status).to.equal(200);
    const cleared = await send('PATCH', `/api/v1/students/${id}`, { photoRef: null, photo_refs: [] });
    expect(cleared.status, cleared.text).to.equal(200);
    expectEnvelope(await get(`/api/v1/students/${id}/photo`), 404, 'NOT_FOUND');
    expect(await rosterDoc(`photo:${id}`)).to.equal(undefined);
  });

  it('a new photo replaces the old one under a new key', async () => {
    const id = await student();
    await consent(id);
    const first = decodeAs(
      StoredPhoto,
      (await upload(id, await picture(100, 100).jpeg().toBuffer(), 'image/jpeg')).json,
    );
    const second = decodeAs(
      StoredPhoto,
      (await upload(id, await picture(120, 90).png().toBuffer(), 'image/png')).json,
    );
    expect(second.photoRef).to.not.equal(first.photoRef);
    expect((await get(`/api/v1/students/${id}`)).json).to.deep.include({ photo_refs: [second.photoRef] });
    expect(await sharp(await image(id)).metadata()).to.deep.include({ width: 120, height: 90 });
  });

  it('tablets get the thumbnail through the roster only while consent is active; revoking erases it from every read', async () => {
    const id = await student();
    const consentId = await consent(id);
    const stored = decodeAs(
      StoredPhoto,
      (await upload(id, await picture(600, 800).jpeg().toBuffer(), 'image/jpeg')).json,
    );
    const doc = decodeAs(
      t.type({ docType: t.literal('rosterPhoto'), photoRef: t.string, data: t.string }),
      await rosterDoc(`photo:${id}`),
    );
    expect(doc.photoRef).to.equal(stored.photoRef);
    expect(await sharp(Buffer.from(doc.data, 'base64')).metadata()).to.deep.include({
      format: 'jpeg',
      width: 192,
      height: 256,
    });
    expect(await rosterDoc(`student:${id}`)).to.deep.include({ photoRef: stored.photoRef });

    const r = await revoke(consentId);
    expect(r.status, r.text).to.equal(200);
    // At once: no read serves it, with no roster pass in between.
    expect(expectEnvelope(await get(`/api/v1/students/${id}/photo`), 409, 'CONFLICT').details).to.deep.equal({
      reason: 'NO_ACTIVE_IMAGE_CONSENT',
    });
    expectEnvelope(await get(`/api/v1/students/${id}/photo?size=thumb`, TOKENS.CHAMADOR), 409, 'CONFLICT');
    expect((await get(`/api/v1/students/${id}`)).json).to.deep.include({ photoRef: null, photo_refs: [] });
    // The next pull: no photo document, no reference.
    expect(await rosterDoc(`photo:${id}`)).to.equal(undefined);
    expect(await rosterDoc(`student:${id}`)).to.deep.include({ photoRef: null });
    // Erased, not hidden: a new consent does not bring the old photo back.
    expect(await h.svc.store.db.private.get(`photo:${id}`).catch(() => undefined)).to.equal(undefined);
    await consent(id);
    expectEnvelope(await get(`/api/v1/students/${id}/photo`), 404, 'NOT_FOUND');
  });
});
