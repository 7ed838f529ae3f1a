/**
 * A student's photo (decision 0033): uploaded as JPEG, PNG or WebP, stored only re-encoded as JPEG
 * with a thumbnail, kept in the private database (never replicated) and served only while the
 * student has an active image consent. The stored key is the student's `photoRef` and only
 * `photo_refs` entry.
 */
import * as t from 'io-ts';
import { BytesType, boundedInt, boundedString, IsoInstant, object, Uuid } from './codec.js';

/** The largest upload read (413 beyond): a phone camera's JPEG fits, a raw scan does not. */
export const MAX_PHOTO_BYTES = 5 * 1024 * 1024;

/** The long side of the stored image and of the thumbnail, in pixels. */
export const PHOTO_MAX_SIDE = 1024;
export const THUMB_MAX_SIDE = 256;

/** What is stored and served: JPEG, which every browser and every tool that reads an export opens. */
export const PHOTO_MEDIA_TYPE = 'image/jpeg';

export const PhotoUpload = new BytesType(
  'image/jpeg',
  'The photo as JPEG, PNG or WebP (the Content-Type says which). It is decoded and stored re-encoded as ' +
    `JPEG at most ${PHOTO_MAX_SIDE} px on its long side, without its metadata (EXIF, GPS), with a ` +
    `${THUMB_MAX_SIDE} px thumbnail; the bytes sent are never stored or served.`,
  MAX_PHOTO_BYTES,
  ['image/png', 'image/webp'],
);

export const PhotoImage = new BytesType(
  PHOTO_MEDIA_TYPE,
  'The stored image or its thumbnail, as JPEG.',
  MAX_PHOTO_BYTES,
);

export const PhotoSize = t.keyof({ full: null, thumb: null });
export type PhotoSize = t.TypeOf<typeof PhotoSize>;

export const PhotoQuery = object(
  'PhotoQuery',
  {},
  {
    size: PhotoSize,
  },
  { description: '`size=thumb` answers the thumbnail; the full image otherwise.' },
);

const Pixels = (description: string) => boundedInt(1, 100_000, { description });
const Bytes = (description: string) => boundedInt(0, MAX_PHOTO_BYTES, { description });

const PhotoKey = boundedString(1, 512, {
  classification: 'sensitive',
  description: "The stored photo's key: the student's `photoRef` and only `photo_refs` entry.",
});

/** What an upload answers: the stored key and the sizes of what was stored (never the image). */
export const StudentPhoto = object(
  'StudentPhoto',
  {
    studentId: Uuid,
    photoRef: PhotoKey,
    contentType: t.literal(PHOTO_MEDIA_TYPE),
    width: Pixels('Width of the stored image.'),
    height: Pixels('Height of the stored image.'),
    bytes: Bytes('Size of the stored image.'),
    thumbWidth: Pixels('Width of the thumbnail.'),
    thumbHeight: Pixels('Height of the thumbnail.'),
    thumbBytes: Bytes('Size of the thumbnail.'),
    consentId: Uuid,
    uploadedAt: IsoInstant,
  },
  {},
  { description: 'The photo as stored; `consentId` is the image consent it was stored under.' },
);
export type StudentPhoto = t.TypeOf<typeof StudentPhoto>;

/** The stored record (private database): the metadata beside its two attachments, `full` and `thumb`. */
export const PhotoDoc = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('photo'),
  studentId: t.string,
  photoRef: t.string,
  width: t.number,
  height: t.number,
  bytes: t.number,
  thumbWidth: t.number,
  thumbHeight: t.number,
  thumbBytes: t.number,
  consentId: t.string,
  uploadedAt: t.string,
  uploadedBy: t.string,
});
export type PhotoDoc = t.TypeOf<typeof PhotoDoc>;

export const toStudentPhoto = (d: PhotoDoc): StudentPhoto => ({
  studentId: d.studentId,
  photoRef: d.photoRef,
  contentType: PHOTO_MEDIA_TYPE,
  width: d.width,
  height: d.height,
  bytes: d.bytes,
  thumbWidth: d.thumbWidth,
  thumbHeight: d.thumbHeight,
  thumbBytes: d.thumbBytes,
  consentId: d.consentId,
  uploadedAt: d.uploadedAt,
});
