/** A student's photo (decision 0033): stored and served only under an active image consent. */
import * as E from 'fp-ts/lib/Either.js';
import { apiError } from '../../domain/errors.js';
import {
  MAX_PHOTO_BYTES,
  type PhotoDoc,
  PhotoImage,
  PhotoQuery,
  PhotoUpload,
  StudentPhoto,
  toStudentPhoto,
} from '../../domain/photo.js';
import { StudentIdParams } from '../../domain/student.js';
import { visibleStudentFields } from '../../rules/students.js';
import { actorOf } from '../actor.js';
import { defineRoute } from '../route.js';

export const putStudentPhotoRoute = defineRoute({
  operationId: 'putStudentPhoto',
  method: 'put',
  path: '/api/v1/students/{studentId}/photo',
  auth: 'cadastro',
  permission: 'students.add',
  summary: "Store a student's photo (only with an active image consent)",
  description:
    'The body is the image (`image/jpeg`, `image/png` or `image/webp`), at most ' +
    `${MAX_PHOTO_BYTES / 1024 / 1024} MB (413 beyond). It is decoded and stored re-encoded as JPEG without its ` +
    'metadata, with a 256 px thumbnail; the bytes sent are never served. Bytes that are not such an image are 415. ' +
    'Without an active image consent the answer is 400 `VALIDATION_FAILED` (`details.reason` ' +
    '`NO_ACTIVE_IMAGE_CONSENT`) and nothing is stored; a deleted student is 409. The stored key becomes the ' +
    "student's `photoRef` and only `photo_refs` entry, replacing any previous photo. Revoking the last active " +
    'consent erases the photo.',
  tags: ['students'],
  params: StudentIdParams,
  body: PhotoUpload,
  response: { status: 200, description: 'The stored photo (its key and sizes).', codec: StudentPhoto },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const stored = await ctx.deps.registration.photos.upload(actor.right, ctx.params.studentId, ctx.body);
    return E.map((d: PhotoDoc) => ({ body: toStudentPhoto(d) }))(stored);
  },
});

export const getStudentPhotoRoute = defineRoute({
  operationId: 'getStudentPhoto',
  method: 'get',
  path: '/api/v1/students/{studentId}/photo',
  auth: 'bearer',
  summary: "A student's photo, or its thumbnail (`size=thumb`)",
  description:
    "JPEG, for the roles that read a student's `photoRef` (ADMIN, CADASTRO, CHAMADOR and the custom roles with " +
    '`students.add` or `attendance`; others 403), and only while the student has an active image consent (409 ' +
    'otherwise, `details.reason` `NO_ACTIVE_IMAGE_CONSENT`, from the moment of the revocation). 404 when the ' +
    'student has no photo. Every successful read is audited.',
  tags: ['students'],
  params: StudentIdParams,
  query: PhotoQuery,
  response: {
    status: 200,
    description: 'The image.',
    codec: PhotoImage,
    mediaType: 'image/jpeg',
  },
  errors: ['NOT_FOUND', 'CONFLICT', 'FORBIDDEN_ROLE'],
  auditRead: 'READ_SENSITIVE',
  handler: async ({ params, query, principal, deps }) => {
    if (principal === null) return E.left(apiError('UNAUTHORIZED'));
    if (!visibleStudentFields(principal.roles, principal.permissions).has('photoRef'))
      return E.left(apiError('FORBIDDEN_ROLE', 'Your roles do not read students’ photos.'));
    const image = await deps.registration.photos.read(params.studentId, query.size ?? 'full');
    // `Cache-Control: no-store` like every API answer: no cache keeps it past a revocation.
    return E.map((body: Uint8Array) => ({ body }))(image);
  },
});

export const photosRoutes = [putStudentPhotoRoute, getStudentPhotoRoute];
