/**
 * The family pass (decision 0049): a QR code that stands for the children who share a guardian phone,
 * for checking them in (never out). What is stored is only how many times each family's pass was
 * replaced; the pass itself is derived from the check-in secret each time it is needed.
 */
import * as t from 'io-ts';
import { BytesType, boundedInt, boundedString, IsoInstant, object, PathId } from './codec.js';

/**
 * A family's pass generation (private database, `familyPass:<familyKey>`): absent means generation 0,
 * the pass every family has from the start; each revocation adds one.
 */
export const FamilyPassDoc = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('familyPass'),
  familyKey: t.string,
  generation: t.number,
  revokedAt: t.string,
  revokedBy: t.union([t.string, t.null]),
  /** The keyed request of the last revocation: its retry replaces nothing again. */
  requestKey: t.union([t.string, t.null]),
});
export type FamilyPassDoc = t.TypeOf<typeof FamilyPassDoc>;

export const familyPassDocId = (familyKey: string): string => `familyPass:${familyKey}`;

/** Big enough for a card's PNG at 300 dpi; the document states it as the answer's bound. */
const MAX_CARD_BYTES = 1024 * 1024;

export const FamilyPassCard = new BytesType(
  'image/svg+xml',
  "The printable card (85.6 × 54 mm): the family's QR code, the guardian's first name and the children's " +
    'first names. SVG unless `format=png` asks for a PNG at 300 dpi.',
  MAX_CARD_BYTES,
  ['image/png'],
);

export const FamilyPassFormat = t.keyof({ svg: null, png: null });
export type FamilyPassFormat = t.TypeOf<typeof FamilyPassFormat>;

export const FamilyPassQuery = object(
  'FamilyPassQuery',
  {},
  { format: FamilyPassFormat },
  { description: '`format=png` answers a PNG; an SVG otherwise.' },
);

const PassText = boundedString(1, 100, {
  classification: 'none',
  description:
    "The QR code's text, `CHAMADA:FP1:<issuer>:<token>`: an opaque token, no personal data. Checks a family " +
    'in at a tablet; never enough to check a child out.',
  pattern: '^CHAMADA:FP1:[A-Z2-7]{8}:[A-Z2-7]{26}$',
});

/** What a tablet prints on the guardian's stub while online. */
export const FamilyPassContent = object(
  'FamilyPassContent',
  { studentId: PathId, content: PassText },
  {},
  { description: "The text of the family's current QR code, for the guardian's stub printed at check-in." },
);
export type FamilyPassContent = t.TypeOf<typeof FamilyPassContent>;

export const FamilyPassIssued = object(
  'FamilyPassIssued',
  {
    studentId: PathId,
    generation: boundedInt(1, 1_000_000, {
      description: "How many times the family's pass has been replaced, this time included.",
    }),
    issuedAt: IsoInstant,
  },
  {},
  {
    description:
      'The old pass is refused by every tablet from its next roster pull; `GET …/family-pass` prints the new one.',
  },
);
export type FamilyPassIssued = t.TypeOf<typeof FamilyPassIssued>;
