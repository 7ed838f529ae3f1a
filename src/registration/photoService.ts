/**
 * Students' photos (decision 0033): stored only under an active image consent, served only while one
 * is active, erased when the last one is revoked. The stored key becomes the student's `photoRef` and
 * `photo_refs` through the student service, so the change is an event like any field change and the
 * roster follows it.
 */
import { createHash } from 'node:crypto';
import * as E from 'fp-ts/lib/Either.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { PhotoDoc, PhotoSize } from '../domain/photo.js';
import type { Actor } from '../domain/principal.js';
import { boundedCache } from '../lib/boundedCache.js';
import { photosAllowed } from '../rules/students.js';
import type { ConsentStore } from '../store/consents.js';
import type { PhotoStore } from '../store/photos.js';
import type { StudentStore } from '../store/students.js';
import type { DirectoryPort } from '../sync/directoryPort.js';
import { type PhotoRefusal, processPhoto } from './photoImages.js';
import { noImageConsent, type StudentService } from './studentService.js';

export interface PhotoServiceDeps {
  readonly photos: PhotoStore;
  readonly students: StudentStore;
  readonly studentService: Pick<StudentService, 'patch'>;
  readonly consents: ConsentStore;
  readonly directory: DirectoryPort;
  readonly clock: () => Date;
}

export interface PhotoService {
  upload(actor: Actor, studentId: string, bytes: Uint8Array): Promise<E.Either<ApiError, PhotoDoc>>;
  read(studentId: string, size: PhotoSize): Promise<E.Either<ApiError, Uint8Array>>;
  /**
   * The thumbnail the roster carries for a child whose `photoRef` is `photoRef`, as base64; undefined
   * when no stored photo has that key. Keys name their content, so a thumbnail read once is kept.
   */
  rosterThumbnail(studentId: string, photoRef: string): Promise<string | undefined>;
  /** Removes the stored photo and the student's references to it (the last consent was revoked). */
  erase(actor: Actor, studentId: string): Promise<void>;
}

const noConsent = (): ApiError => noImageConsent('body');

const refusal = (r: PhotoRefusal): ApiError =>
  r.reason === 'TOO_MANY_PIXELS'
    ? apiError('PAYLOAD_TOO_LARGE', 'The image has more pixels than a photo needs (40 megapixels at most).', {
        reason: r.reason,
      })
    : apiError(
        'UNSUPPORTED_MEDIA_TYPE',
        r.reason === 'NOT_AN_IMAGE'
          ? 'The body is not an image that can be read (JPEG, PNG or WebP).'
          : `Only JPEG, PNG and WebP photos are accepted (this one is ${r.format}).`,
        { reason: r.reason },
      );

/** The key names the stored image's content, so a new photo is a new key and a cache never goes stale. */
const keyOf = (studentId: string, full: Uint8Array): string =>
  `photos/${studentId}/${createHash('sha256').update(full).digest('hex').slice(0, 32)}.jpg`;

export const photoService = (deps: PhotoServiceDeps): PhotoService => {
  // About 15 KB a thumbnail in base64: 8 MB keeps a few hundred children's without a read per pass.
  const thumbnails = boundedCache<string>({
    maxWeight: 8 * 1024 * 1024,
    weigh: (v) => Math.max(1, v.length),
  });
  const activeConsentOf = async (studentId: string) =>
    (await deps.consents.listForSubject('STUDENT', studentId)).find((c) => c.revoked_at === null);

  return {
    async upload(actor, studentId, bytes) {
      const student = await deps.students.get(studentId);
      if (student === undefined) return E.left(apiError('NOT_FOUND', 'No such student.'));
      if (student.status === 'DELETED')
        return E.left(apiError('CONFLICT', 'The student is deleted.', { reason: 'STUDENT_DELETED' }));
      // Read from the store, not the directory: another instance may have recorded or revoked it.
      const consent = await activeConsentOf(studentId);
      if (consent === undefined) return E.left(noConsent());
      const processed = await processPhoto(bytes);
      if (E.isLeft(processed)) return E.left(refusal(processed.left));
      const { full, thumb } = processed.right;
      const photoRef = keyOf(studentId, full.bytes);
      const stored = await deps.photos.put(
        {
          studentId,
          photoRef,
          width: full.width,
          height: full.height,
          bytes: full.bytes.length,
          thumbWidth: thumb.width,
          thumbHeight: thumb.height,
          thumbBytes: thumb.bytes.length,
          consentId: consent.consentId,
          uploadedAt: deps.clock().toISOString(),
          uploadedBy: actor.principal.userId,
        },
        { full: full.bytes, thumb: thumb.bytes },
      );
      const linked = await deps.studentService.patch(actor, studentId, { photoRef, photo_refs: [photoRef] });
      // A revocation between the check and now: the photo must not outlive the consent.
      if (E.isLeft(linked) || (await activeConsentOf(studentId)) === undefined) {
        // Only this upload's photo: a concurrent upload that replaced it keeps its own.
        if ((await deps.photos.get(studentId))?.photoRef === photoRef) await deps.photos.remove(studentId);
        return E.isLeft(linked) ? linked : E.left(noConsent());
      }
      return E.right(stored);
    },

    async read(studentId, size) {
      const student = await deps.students.get(studentId);
      if (student === undefined) return E.left(apiError('NOT_FOUND', 'No such student.'));
      if (!photosAllowed(deps.directory.activeConsents(studentId)))
        return E.left(
          apiError('CONFLICT', 'This student has no active image consent: the photo is not served.', {
            reason: 'NO_ACTIVE_IMAGE_CONSENT',
          }),
        );
      // Served only while the record names it: a PATCH that clears `photoRef` hides the photo too.
      const stored = await deps.photos.get(studentId);
      const named = stored !== undefined && student.photo_refs.includes(stored.photoRef);
      const image = named ? await deps.photos.image(studentId, size) : undefined;
      return image === undefined
        ? E.left(apiError('NOT_FOUND', 'This student has no photo.'))
        : E.right(image);
    },

    async rosterThumbnail(studentId, photoRef) {
      const held = thumbnails.get(photoRef);
      if (held !== undefined) return held;
      const doc = await deps.photos.get(studentId);
      if (doc === undefined || doc.photoRef !== photoRef) return undefined;
      const image = await deps.photos.image(studentId, 'thumb');
      if (image === undefined) return undefined;
      const encoded = Buffer.from(image).toString('base64');
      thumbnails.set(photoRef, encoded);
      return encoded;
    },

    async erase(actor, studentId) {
      const doc = await deps.photos.get(studentId);
      if (doc !== undefined) thumbnails.delete(doc.photoRef);
      await deps.photos.remove(studentId);
      const student = await deps.students.get(studentId);
      if (student === undefined || student.status === 'DELETED') return;
      if (student.photoRef === null && student.photo_refs.length === 0) return;
      await deps.studentService.patch(actor, studentId, { photoRef: null, photo_refs: [] });
    },
  };
};
