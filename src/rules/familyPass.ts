/**
 * The family pass (decision 0049): the text of a family's QR code, and how a tablet checks a scanned
 * one against its roster, offline.
 *
 * The rule: a pass is `CHAMADA:FP1:<issuer>:<token>`. The token is 128 bits of an HMAC under the
 * server's check-in secret of the family key and the pass's generation; the issuer, 40 bits of an HMAC
 * of a fixed message, names the deployment. A tablet holds neither the secret nor any token: the
 * roster carries, per family, a hash of the current pass's token and the hashes of the passes it
 * replaced. A scanned pass is the family whose current hash is the token's hash; one whose hash is a
 * replaced pass's is REVOKED; any other is UNKNOWN_PASS. Finding a token for a hash is a preimage of
 * SHA-256, so a stolen tablet cannot make a pass, and a card tells nothing but that it is a pass.
 *
 * Pure: hashes are given as functions of the caller's (Node's crypto on the server, WebCrypto on the
 * tablet, which answers asynchronously: the tablet reads, hashes, then matches).
 */
import * as E from 'fp-ts/lib/Either.js';

const SCHEME = 'CHAMADA';
const VERSION = 'FP1';

/** RFC 4648 base32: upper-case letters and digits, all in a QR code's compact alphanumeric mode. */
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** Bytes of a token and of a hash of one: 128 bits. */
const TOKEN_BYTES = 16;
const ISSUER_BYTES = 5;
/** Base32 lengths of those (no padding). */
const TOKEN_CHARS = Math.ceil((TOKEN_BYTES * 8) / 5);
const ISSUER_CHARS = Math.ceil((ISSUER_BYTES * 8) / 5);

/** How many replaced passes the roster still names as revoked (older ones read as unknown). */
export const REVOKED_KEPT = 5;

export const base32 = (bytes: Uint8Array): string => {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
};

/** What the token of a family's pass of one generation is the HMAC of (keyed by the check-in secret). */
export const passTokenMessage = (familyKey: string, generation: number): string =>
  `chamada-family-pass:${familyKey}:${generation}`;

/** What the deployment's issuer tag is the HMAC of (keyed by the check-in secret). */
export const PASS_ISSUER_MESSAGE = 'chamada-family-pass-issuer';

export const tokenOfDigest = (hmac: Uint8Array): string => base32(hmac.subarray(0, TOKEN_BYTES));
export const issuerOfDigest = (hmac: Uint8Array): string => base32(hmac.subarray(0, ISSUER_BYTES));
/** What the roster carries of a token: its SHA-256 (`digest`), cut to 128 bits. */
export const passHashOfDigest = (digest: Uint8Array): string => base32(digest.subarray(0, TOKEN_BYTES));

export const passText = (issuer: string, token: string): string => `${SCHEME}:${VERSION}:${issuer}:${token}`;

export interface PassReading {
  readonly issuer: string;
  readonly token: string;
}

const READING = new RegExp(
  `^${SCHEME}:${VERSION}:([${BASE32}]{${ISSUER_CHARS}}):([${BASE32}]{${TOKEN_CHARS}})$`,
);

/**
 * A scanned text as a pass, or NOT_A_PASS (another QR code, a damaged one, another version). Case and
 * surrounding spaces are forgiven: some scanners and keyboards change them.
 */
export const readPassText = (scanned: string): E.Either<'NOT_A_PASS', PassReading> => {
  const m = READING.exec(scanned.trim().toUpperCase());
  const issuer = m?.[1];
  const token = m?.[2];
  return issuer === undefined || token === undefined ? E.left('NOT_A_PASS') : E.right({ issuer, token });
};

/** What the roster says of one family's pass (a `rosterFamily` document has these and more). */
export interface FamilyPassEntry {
  readonly familyKey: string;
  readonly guardianName: string;
  readonly studentIds: ReadonlyArray<string>;
  /** The current pass's hash. */
  readonly pass: string;
  /** Hashes of the passes a revocation replaced, newest first. */
  readonly revoked: ReadonlyArray<string>;
}

/** The roster's passes: the deployment's issuer tag (absent from an older server's roster) and the families. */
export interface PassBook {
  readonly issuer: string | undefined;
  readonly families: ReadonlyArray<FamilyPassEntry>;
}

export type PassRefusal =
  /** Not a family pass at all: another QR code, or a damaged one. */
  | 'NOT_A_PASS'
  /** A pass of another deployment (another church's, or a test server's). */
  | 'OTHER_DEPLOYMENT'
  /** A pass that was replaced: the card was reported lost, or issued again. */
  | 'REVOKED'
  /** No family of this roster has it: forged, or from before the family's phone changed. */
  | 'UNKNOWN_PASS'
  /** The family has no child on this tablet's roster any more. */
  | 'NO_CHILDREN';

export interface PassFamily {
  readonly familyKey: string;
  readonly guardianName: string;
  /** The family's children the tablet holds, in the roster's order. */
  readonly studentIds: ReadonlyArray<string>;
}

/**
 * The family a read pass stands for, given the hash of its token (`passHashOfDigest` of its SHA-256).
 * `listed` says which children the tablet holds (a child deleted since the family document was written
 * is not offered).
 */
export const matchFamilyPass = (
  reading: PassReading,
  tokenHash: string,
  book: PassBook,
  listed: (studentId: string) => boolean,
): E.Either<PassRefusal, PassFamily> => {
  if (book.issuer !== undefined && reading.issuer !== book.issuer) return E.left('OTHER_DEPLOYMENT');
  const current = book.families.find((f) => f.pass === tokenHash);
  if (current === undefined)
    return E.left(book.families.some((f) => f.revoked.includes(tokenHash)) ? 'REVOKED' : 'UNKNOWN_PASS');
  const studentIds = current.studentIds.filter(listed);
  if (studentIds.length === 0) return E.left('NO_CHILDREN');
  return E.right({ familyKey: current.familyKey, guardianName: current.guardianName, studentIds });
};

/**
 * Reads and matches at once, where SHA-256 is at hand synchronously (`sha256` of the token's text, as
 * UTF-8; on the server, and in tests).
 */
export const verifyFamilyPass = (
  scanned: string,
  book: PassBook,
  sha256: (text: string) => Uint8Array,
  listed: (studentId: string) => boolean = () => true,
): E.Either<PassRefusal, PassFamily> =>
  E.chain((reading: PassReading) =>
    matchFamilyPass(reading, passHashOfDigest(sha256(reading.token)), book, listed),
  )(readPassText(scanned));

/** The first word of a name: all a card or a family document shows of a person. */
export const firstName = (name: string): string => name.trim().split(/\s+/)[0] ?? '';

/**
 * The guardian a family is named by: of the children's first guardians (the record's `guardianName`),
 * the first name most of them give; a tie goes to the first in alphabetical order, so every pass names
 * the same one.
 */
export const familyGuardianName = (guardianNames: ReadonlyArray<string>): string => {
  const counts = new Map<string, number>();
  for (const name of guardianNames) {
    const first = firstName(name);
    if (first !== '') counts.set(first, (counts.get(first) ?? 0) + 1);
  }
  let best = '';
  let most = 0;
  for (const [name, n] of [...counts].sort(([a], [b]) => a.localeCompare(b, 'pt-BR'))) {
    if (n > most) {
      best = name;
      most = n;
    }
  }
  return best;
};
