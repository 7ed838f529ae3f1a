/**
 * The daily code on the tablet: the server's own rule (`dailyCode` in src/rules/checkin.ts) fed with
 * WebCrypto HMACs keyed by the replicated day key, so a label printed offline carries exactly the code
 * the server derives. The rule asks for digests synchronously and WebCrypto answers asynchronously, so
 * the rule is run again with each digest it asked for until it has all it needs (one, almost always;
 * a redraw after an offensive code needs one more each).
 */
import { dailyCode } from '../../rules/checkin.js';

class MissingDigest {
  constructor(readonly message: string) {}
}

/** The bytes of a base64url string (day keys travel as base64url). */
export const base64UrlBytes = (s: string): Uint8Array<ArrayBuffer> => {
  const binary = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
};

export const deviceDailyCode = async (
  dayKey: Uint8Array<ArrayBuffer>,
  studentId: string,
): Promise<string> => {
  const subtle = globalThis.crypto.subtle;
  const key = await subtle.importKey('raw', dayKey, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const encoder = new TextEncoder();
  const digests = new Map<string, Uint8Array>();
  const lookup = (message: string): Uint8Array => {
    const digest = digests.get(message);
    if (digest === undefined) throw new MissingDigest(message);
    return digest;
  };
  for (;;) {
    try {
      return dailyCode(studentId, lookup);
    } catch (e) {
      if (!(e instanceof MissingDigest)) throw e;
      digests.set(e.message, new Uint8Array(await subtle.sign('HMAC', key, encoder.encode(e.message))));
    }
  }
};
