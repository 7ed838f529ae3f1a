/** Students: register, change, soft delete, read by role, search and page. */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { openCursor, signCursor } from '../../crypto/cursor.js';
import { type ApiError, apiError } from '../../domain/errors.js';
import {
  CreateStudentBody,
  DEFAULT_PAGE_SIZE,
  DeleteStudentBody,
  MAX_PAGE_SIZE,
  PatchStudentBody,
  Student,
  type StudentDoc,
  StudentIdParams,
  StudentListQuery,
  StudentPage,
  StudentStatus,
} from '../../domain/student.js';
import { StudentExport } from '../../domain/studentExport.js';
import { studentDocView } from '../../registration/studentService.js';
import { foldName, photosAllowed, visibleStudentFields } from '../../rules/students.js';
import { actorOf } from '../actor.js';
import { defineRoute, type HandlerContext } from '../route.js';

// `c` (the class filter) came with the office; a cursor without it pages every student.
const CursorPayload = t.intersection([
  t.type({ k: t.string, s: StudentStatus, q: t.string }),
  t.partial({ c: t.string }),
]);

const badCursor = (): ApiError =>
  apiError('VALIDATION_FAILED', 'The cursor is not one this server issued for this query.', {
    issues: [{ path: 'query.cursor', message: 'invalid cursor' }],
  });

/** A freshly written student, shown to its writer (ADMIN, CADASTRO or a `students.add` role: every field). */
const writerView = (ctx: HandlerContext<unknown, unknown, unknown>, doc: StudentDoc) =>
  studentDocView(
    doc,
    visibleStudentFields(ctx.principal?.roles ?? [], ctx.principal?.permissions ?? []),
    photosAllowed(ctx.deps.registration.directory.activeConsents(doc.studentId)),
  );

export const listStudentsRoute = defineRoute({
  operationId: 'listStudents',
  method: 'get',
  path: '/api/v1/students',
  auth: 'bearer',
  summary: 'Search and page students',
  description:
    `Ordered by name (accents and case folded), then id. Keyset paging: \`limit\` ${DEFAULT_PAGE_SIZE} by default, at most ` +
    `${MAX_PAGE_SIZE}; \`nextCursor\` is opaque and signed (a forged or edited cursor is 400) and belongs to its \`q\`, ` +
    '`status` and `classId`. Paging never repeats or skips a student that exists throughout, even while others are added. ' +
    '`photoRef` is null unless the student has an active image consent.',
  tags: ['students'],
  query: StudentListQuery,
  response: { status: 200, description: 'One page.', codec: StudentPage },
  auditRead: 'READ_SENSITIVE',
  handler: async ({ query, deps }) => {
    const status = query.status ?? 'ACTIVE';
    const q = foldName(query.q ?? '');
    let afterKey: string | undefined;
    if (query.cursor !== undefined) {
      const decoded = CursorPayload.decode(openCursor(deps.secrets.cursorKey, query.cursor));
      if (
        E.isLeft(decoded) ||
        decoded.right.s !== status ||
        decoded.right.q !== q ||
        decoded.right.c !== query.classId
      )
        return E.left(badCursor());
      afterKey = decoded.right.k;
    }
    const page = await deps.registration.directory.page({
      status,
      q,
      ...(query.classId === undefined ? {} : { classId: query.classId }),
      afterKey,
      limit: query.limit === undefined ? DEFAULT_PAGE_SIZE : Number(query.limit),
    });
    return E.right({
      body: {
        items: page.items.map((e) => ({
          studentId: e.studentId,
          displayName: e.displayName,
          photoRef: e.photoRef,
          status: e.status,
          updatedAt: e.updatedAt,
        })),
        nextCursor:
          page.lastKey === undefined
            ? null
            : signCursor(deps.secrets.cursorKey, {
                k: page.lastKey,
                s: status,
                q,
                ...(query.classId === undefined ? {} : { c: query.classId }),
              }),
      },
    });
  },
});

export const createStudentRoute = defineRoute({
  operationId: 'createStudent',
  method: 'post',
  path: '/api/v1/students',
  auth: 'cadastro',
  permission: 'students.add',
  summary: 'Register a student',
  description: "An unknown `classId` is 400. `nucleusId` defaults to the class's nucleus.",
  tags: ['students'],
  body: CreateStudentBody,
  response: {
    status: 201,
    description: 'The new student.',
    codec: Student,
    headers: { Location: 'the student' },
  },
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const created = await ctx.deps.registration.students.create(actor.right, ctx.body);
    return E.map((doc: StudentDoc) => ({
      status: 201,
      headers: { Location: `/api/v1/students/${doc.studentId}` },
      auditSubjectId: doc.studentId,
      body: writerView(ctx, doc),
    }))(created);
  },
});

export const getStudentRoute = defineRoute({
  operationId: 'getStudent',
  method: 'get',
  path: '/api/v1/students/{studentId}',
  auth: 'bearer',
  summary: "Read a student, minimised to the caller's role",
  description:
    'ADMIN and CADASTRO read every field; CHAMADOR reads identification, guardians, phones, photo (with consent) and ' +
    'health notes, not address or birth date; RELATORIOS reads name, class, nucleus, status and membership only. ' +
    'A read that returns sensitive fields is audited.',
  tags: ['students'],
  params: StudentIdParams,
  response: { status: 200, description: 'The student.', codec: Student },
  errors: ['NOT_FOUND'],
  auditRead: 'READ_SENSITIVE',
  handler: async ({ params, principal, deps }) => {
    if (principal === null) return E.left(apiError('UNAUTHORIZED'));
    const read = await deps.registration.students.read(principal, params.studentId);
    return E.map((r: { view: Student }) => ({ body: r.view, auditSubjectId: params.studentId }))(read);
  },
});

export const patchStudentRoute = defineRoute({
  operationId: 'updateStudent',
  method: 'patch',
  path: '/api/v1/students/{studentId}',
  auth: 'cadastro',
  permission: 'students.add',
  summary: 'Change a student',
  description:
    'Read-only fields in the body are 400. Photos need an active image consent (400 `VALIDATION_FAILED`, ' +
    '`details.reason` `NO_ACTIVE_IMAGE_CONSENT`), and `photoRef` and each `photo_refs` entry must name the ' +
    "student's stored photo (`PUT …/photo`) or a reference the record holds already (400, `details.reason` " +
    '`PHOTO_NOT_STORED`, an issue per reference); `null` and `[]` clear them. A deleted student is 409.',
  tags: ['students'],
  params: StudentIdParams,
  body: PatchStudentBody,
  response: { status: 200, description: 'The updated student.', codec: Student },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const updated = await ctx.deps.registration.students.patch(actor.right, ctx.params.studentId, ctx.body);
    return E.map((doc: StudentDoc) => ({ body: writerView(ctx, doc) }))(updated);
  },
});

export const deleteStudentRoute = defineRoute({
  operationId: 'deleteStudent',
  method: 'post',
  path: '/api/v1/students/{studentId}/delete',
  auth: 'admin',
  summary: 'Soft-delete a student, with a justification',
  description:
    'Sets status DELETED, `deleted_justification` and `deletedAt`, and appends a SOFT_DELETE event. The stored photo is ' +
    'erased at once and `photoRef`/`photo_refs` cleared (decision 0045); the rest of the record stays until the ' +
    'retention period for deleted students ends (`GET /api/v1/church/retention`), when its personal data is ' +
    'anonymised. The justification is 10 to 500 characters; a shorter or longer one is 400 VALIDATION_FAILED (one ' +
    'statement of the contract says 422; every validation failure here is 400). A second delete is 409.',
  tags: ['students'],
  params: StudentIdParams,
  body: DeleteStudentBody,
  response: { status: 200, description: 'The deleted student.', codec: Student },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const deleted = await ctx.deps.registration.students.softDelete(
      actor.right,
      ctx.params.studentId,
      ctx.body.justification,
    );
    return E.map((doc: StudentDoc) => ({ body: writerView(ctx, doc) }))(deleted);
  },
});

export const exportStudentRoute = defineRoute({
  operationId: 'exportStudent',
  method: 'get',
  path: '/api/v1/students/{studentId}/export',
  auth: 'admin',
  summary: 'Everything held about a student (LGPD art. 18)',
  description:
    'The full record, image consents with history, events and audit entries naming the student, in one document. ' +
    'A deleted student is exported whole until the retention period for deleted students ends; after it the export ' +
    'answers what is left (decision 0045): the record with `anonymisedAt` set and its personal fields cleared, the ' +
    "consents without the granter's name, the events without personal values, the check-ins without the adults, and " +
    'the audit entries until the audit period removes their subject.',
  tags: ['students'],
  params: StudentIdParams,
  response: { status: 200, description: 'The export.', codec: StudentExport },
  errors: ['NOT_FOUND'],
  auditRead: 'EXPORT',
  handler: async ({ params, deps }) => {
    const exported = await deps.registration.exports.exportOf(params.studentId);
    return E.map((body: StudentExport) => ({ body, auditSubjectId: params.studentId }))(exported);
  },
});

export const studentsRoutes = [
  listStudentsRoute,
  createStudentRoute,
  getStudentRoute,
  patchStudentRoute,
  deleteStudentRoute,
  exportStudentRoute,
];
