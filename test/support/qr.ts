/** Reads the one QR code in an image with jsQR, a decoder independent of the encoder the service uses. */
import jsQRModule from 'jsqr';
import sharp from 'sharp';

/** `jsqr` is CommonJS; its module object is the decoder, and `.default` the same decoder again. */
const jsQR = jsQRModule.default;

/** The text of the QR code in `image` (any format sharp reads; an SVG drawn at `density` dpi). */
export const qrTextOf = async (image: Uint8Array, density = 150): Promise<string | undefined> => {
  const { data, info } = await sharp(Buffer.from(image), { density })
    .flatten({ background: '#ffffff' })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return jsQR(new Uint8ClampedArray(data.buffer, data.byteOffset, data.byteLength), info.width, info.height)
    ?.data;
};
