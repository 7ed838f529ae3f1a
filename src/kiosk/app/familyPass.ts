/**
 * The family pass on the tablet (decision 0049). A scanned pass is checked offline by the server's
 * own rule (`rules/familyPass.ts`) against the roster's hashes, with WebCrypto's SHA-256 of its token
 * (asynchronous, so the tablet reads, hashes, then matches). The tablet holds no pass: the guardian's
 * stub carries the family's QR code only when the server answers it at the moment of printing.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { qrSymbol } from '../../lib/qrCode.js';
import {
  matchFamilyPass,
  type PassFamily,
  type PassRefusal,
  passHashOfDigest,
  readPassText,
} from '../../rules/familyPass.js';
import { request } from './api.js';
import { passBookOf, type RosterIndex } from './rosterIndex.js';

/** The family a scanned text stands for on this tablet, or why it stands for none. */
export const checkFamilyPass = async (
  index: RosterIndex,
  scanned: string,
): Promise<E.Either<PassRefusal, PassFamily>> => {
  const reading = readPassText(scanned);
  if (E.isLeft(reading)) return reading;
  const digest = await globalThis.crypto.subtle.digest(
    'SHA-256',
    new TextEncoder().encode(reading.right.token),
  );
  return matchFamilyPass(reading.right, passHashOfDigest(new Uint8Array(digest)), passBookOf(index), (id) =>
    index.students.has(id),
  );
};

const PassContent = t.type({ content: t.string });

/** How long the stub waits for the server before it prints without the QR code. */
const STUB_WAIT_MS = 5_000;

/**
 * The text of the family pass of `studentId`'s family, asked of the server now; undefined offline, for
 * a child with no family, or for one the server does not know yet (a visitor registered offline).
 */
export const stubPassText = async (
  authedFetch: typeof fetch,
  studentId: string,
): Promise<string | undefined> => {
  const answer = await request(
    authedFetch,
    `/api/v1/students/${encodeURIComponent(studentId)}/family-pass/content`,
    { signal: AbortSignal.timeout(STUB_WAIT_MS) },
    PassContent,
  );
  return E.isRight(answer) && E.isRight(readPassText(answer.right.content))
    ? answer.right.content
    : undefined;
};

const SVG_NS = 'http://www.w3.org/2000/svg';

/** A QR code as an inline SVG element: no image address, which the kiosk's CSP would refuse. */
export const qrElement = (text: string, label: string, className: string): SVGSVGElement => {
  const { size, path } = qrSymbol(text);
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('viewBox', `0 0 ${size} ${size}`);
  svg.setAttribute('class', className);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
  const drawn = document.createElementNS(SVG_NS, 'path');
  drawn.setAttribute('d', path);
  drawn.setAttribute('fill', '#000');
  drawn.setAttribute('shape-rendering', 'crispEdges');
  svg.append(drawn);
  return svg;
};
