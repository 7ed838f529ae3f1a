/**
 * The family pass's secrets, with Node's HMAC (decision 0049): the token of a family's pass and the
 * deployment's issuer tag are HMACs under the check-in secret, which never leaves the server; what
 * tablets get is the hash of a token (`passHash`), from which no token can be made.
 */
import { createHmac } from 'node:crypto';
import {
  issuerOfDigest,
  PASS_ISSUER_MESSAGE,
  passHashOfDigest,
  passText,
  passTokenMessage,
  REVOKED_KEPT,
  tokenOfDigest,
} from '../rules/familyPass.js';
import { asBytes, sha256 } from './bytes.js';

const hmac = (secret: Uint8Array, message: string): Uint8Array =>
  asBytes(createHmac('sha256', secret).update(message, 'utf8').digest());

export const passIssuer = (secret: Uint8Array): string => issuerOfDigest(hmac(secret, PASS_ISSUER_MESSAGE));

export const passToken = (secret: Uint8Array, familyKey: string, generation: number): string =>
  tokenOfDigest(hmac(secret, passTokenMessage(familyKey, generation)));

/** What the roster carries of a token. */
export const passHash = (token: string): string => passHashOfDigest(sha256(token));

/** The text of the family's QR code at `generation`. */
export const familyPassText = (secret: Uint8Array, familyKey: string, generation: number): string =>
  passText(passIssuer(secret), passToken(secret, familyKey, generation));

/**
 * What the roster says of a family's passes at `generation`: the current one's hash and those of the
 * last few it replaced, newest first.
 */
export const rosterPassHashes = (
  secret: Uint8Array,
  familyKey: string,
  generation: number,
): { readonly pass: string; readonly revoked: string[] } => {
  const revoked: string[] = [];
  for (let g = generation - 1; g >= Math.max(0, generation - REVOKED_KEPT); g -= 1)
    revoked.push(passHash(passToken(secret, familyKey, g)));
  return { pass: passHash(passToken(secret, familyKey, generation)), revoked };
};
