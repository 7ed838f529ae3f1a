/**
 * Decoding an uploaded photo and encoding what is stored (decision 0033), on sharp (libvips). The
 * bytes sent are only ever read here: what is stored and served is a new JPEG made from the decoded
 * pixels, turned upright by its EXIF orientation and then stripped of every metadata block (EXIF,
 * GPS, ICC, XMP), so a crafted file or a location tag never reaches a reader.
 */
import * as E from 'fp-ts/lib/Either.js';
import sharp from 'sharp';
import { PHOTO_MAX_SIDE, THUMB_MAX_SIDE } from '../domain/photo.js';

// libvips caches decoded images and operations for reuse across calls; a service that sees a photo
// now and then gains nothing from it and would keep tens of megabytes outside the heap's budget.
sharp.cache(false);

/** The formats accepted, as libvips names them: an SVG, GIF, TIFF or HEIF is refused, not converted. */
const ACCEPTED = new Set(['jpeg', 'png', 'webp']);

/** About 40 megapixels: any camera's photo; a "decompression bomb" of a few KB stops here. */
const MAX_INPUT_PIXELS = 40_000_000;

export interface EncodedImage {
  readonly bytes: Uint8Array;
  readonly width: number;
  readonly height: number;
}

export interface ProcessedPhoto {
  readonly full: EncodedImage;
  readonly thumb: EncodedImage;
}

export type PhotoRefusal =
  | { readonly reason: 'NOT_AN_IMAGE' }
  | { readonly reason: 'FORMAT_NOT_ACCEPTED'; readonly format: string }
  | { readonly reason: 'TOO_MANY_PIXELS' };

const encode = async (input: Uint8Array, maxSide: number, quality: number): Promise<EncodedImage> => {
  const { data, info } = await sharp(input, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' })
    .rotate()
    .resize({ width: maxSide, height: maxSide, fit: 'inside', withoutEnlargement: true })
    // A PNG or WebP with transparency: JPEG has none, so the page's white shows through.
    .flatten({ background: '#ffffff' })
    .jpeg({ quality, mozjpeg: true })
    .toBuffer({ resolveWithObject: true });
  return { bytes: new Uint8Array(data), width: info.width, height: info.height };
};

/** Decodes `input` and makes the stored image and its thumbnail, or says why it cannot. */
export const processPhoto = async (input: Uint8Array): Promise<E.Either<PhotoRefusal, ProcessedPhoto>> => {
  let format: string | undefined;
  let pixels = 0;
  try {
    const meta = await sharp(input, { limitInputPixels: false }).metadata();
    format = meta.format;
    pixels = (meta.width ?? 0) * (meta.height ?? 0);
  } catch {
    return E.left({ reason: 'NOT_AN_IMAGE' });
  }
  if (format === undefined || !ACCEPTED.has(format))
    return E.left({ reason: 'FORMAT_NOT_ACCEPTED', format: format ?? 'unknown' });
  if (pixels > MAX_INPUT_PIXELS) return E.left({ reason: 'TOO_MANY_PIXELS' });
  try {
    const full = await encode(input, PHOTO_MAX_SIDE, 82);
    // The thumbnail is made from the stored image, not the upload: one decode of the sender's bytes.
    const thumb = await encode(full.bytes, THUMB_MAX_SIDE, 78);
    return E.right({ full, thumb });
  } catch {
    // The header read, the pixels did not (a truncated or corrupt file).
    return E.left({ reason: 'NOT_AN_IMAGE' });
  }
};
