/**
 * Students' photos in the private database (decision 0033): one document per student,
 * `photo:<studentId>`, holding the metadata and two attachments, `full` and `thumb`, both JPEG. The
 * private database never leaves the server; the backup copies attachments with their documents.
 * Attachments go in inline (base64) with the document, so one write stores the record whole on the
 * embedded store and on CouchDB alike.
 */
import { PhotoDoc, type PhotoSize } from '../domain/photo.js';
import { getDoc } from './docs.js';
import { retryOnConflict, stayedContended } from './docWrites.js';
import type { Database } from './pouch.js';
import { isNotFound } from './storeErrors.js';

export const photoDocId = (studentId: string): string => `photo:${studentId}`;

export type NewPhoto = Omit<PhotoDoc, '_id' | '_rev' | 'docType'>;

export interface PhotoStore {
  get(studentId: string): Promise<PhotoDoc | undefined>;
  /** The image bytes of one size, or undefined when the student has no photo. */
  image(studentId: string, size: PhotoSize): Promise<Uint8Array | undefined>;
  /** Stores the photo, replacing the student's previous one. */
  put(photo: NewPhoto, images: { readonly full: Uint8Array; readonly thumb: Uint8Array }): Promise<PhotoDoc>;
  /** Removes the student's photo; false when there was none. */
  remove(studentId: string): Promise<boolean>;
  /** The students a photo is stored for (ids only; the images are not read). */
  studentsWithPhotos(): Promise<string[]>;
}

const JPEG = 'image/jpeg';

const base64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');
const contended = stayedContended('the photo document');

export const photoStore = (db: Database): PhotoStore => ({
  get: (studentId) => getDoc(db, PhotoDoc, photoDocId(studentId)),
  async image(studentId, size) {
    try {
      const data: unknown = await db.getAttachment(photoDocId(studentId), size);
      // LevelDB answers a Buffer; the http adapter a Buffer from express-pouchdb but a Blob from a real
      // CouchDB (the backup round trip on CouchDB 3.4.3 read "no photo"). Anything else is not an
      // image this store wrote.
      if (data instanceof Uint8Array) return new Uint8Array(data);
      if (data instanceof Blob) return new Uint8Array(await data.arrayBuffer());
      return undefined;
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  },
  put(photo, images) {
    const doc = { _id: photoDocId(photo.studentId), docType: 'photo' as const, ...photo };
    // A concurrent upload for the same student: the last one to write wins, as a second upload would.
    return retryOnConflict(
      5,
      async () => {
        const current = await getDoc(db, PhotoDoc, doc._id);
        const r = await db.put({
          ...doc,
          ...(current === undefined ? {} : { _rev: current._rev }),
          _attachments: {
            full: { content_type: JPEG, data: base64(images.full) },
            thumb: { content_type: JPEG, data: base64(images.thumb) },
          },
        });
        return { ...doc, _rev: r.rev };
      },
      contended,
    );
  },
  remove: (studentId) =>
    retryOnConflict(
      5,
      async () => {
        const current = await getDoc(db, PhotoDoc, photoDocId(studentId));
        if (current === undefined) return false;
        try {
          await db.remove(current._id, current._rev);
          return true;
        } catch (e) {
          if (isNotFound(e)) return false;
          throw e;
        }
      },
      contended,
    ),
  async studentsWithPhotos() {
    const prefix = photoDocId('');
    const res = await db.allDocs({ startkey: prefix, endkey: `${prefix}\ufff0` });
    return res.rows.map((r) => r.id.slice(prefix.length));
  },
});
