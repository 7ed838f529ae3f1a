import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { asBytes } from '../../src/crypto/bytes.js';
import { codeFor, dayKey } from '../../src/crypto/dayKeys.js';
import { base64UrlBytes, deviceDailyCode } from '../../src/kiosk/app/deviceCode.js';
import { codeFromDigest, isOffensive } from '../../src/rules/checkin.js';

const copy = (bytes: Uint8Array): Uint8Array<ArrayBuffer> => new Uint8Array(bytes);

describe('kiosk: the daily code computed on the tablet (WebCrypto)', () => {
  const secret = asBytes(randomBytes(32));

  it('equals the server code for the same child and UTC day, from the base64url day key it replicates', async () => {
    for (const day of ['2026-11-25', '2026-11-26', '2026-11-27']) {
      const replicated = Buffer.from(dayKey(secret, day)).toString('base64url');
      for (let i = 0; i < 25; i += 1) {
        const studentId = randomUUID();
        const onDevice = await deviceDailyCode(base64UrlBytes(replicated), studentId);
        expect(onDevice).to.equal(codeFor(secret, studentId, new Date(`${day}T12:00:00.000Z`)));
      }
    }
  });

  it('lands on the same redrawn code when the first draw is offensive', async () => {
    const day = '2026-11-26';
    const key = dayKey(secret, day);
    let studentId: string | undefined;
    for (let i = 0; i < 20_000 && studentId === undefined; i += 1) {
      const candidate = randomUUID();
      const first = codeFromDigest(asBytes(createHmac('sha256', key).update(`code:${candidate}`).digest()));
      if (first !== undefined && isOffensive(first)) studentId = candidate;
    }
    if (studentId === undefined) throw new Error('no offensive first draw found');
    const onDevice = await deviceDailyCode(copy(key), studentId);
    expect(isOffensive(onDevice)).to.equal(false);
    expect(onDevice).to.equal(codeFor(secret, studentId, new Date(`${day}T08:00:00.000Z`)));
  });
});
