/**
 * Nuclei, classes and class sessions. Anyone signed in reads them (every role needs the day's
 * sessions); ADMIN and CADASTRO write them. The contract names no permission for nuclei and classes,
 * so their writes reuse `sessions.edit`: a custom role that may edit sessions may also maintain the
 * classes they belong to. Creating a session needs `sessions.add`, changing one `sessions.edit`.
 */
import * as E from 'fp-ts/lib/Either.js';
import {
  ClassC,
  type ClassDoc,
  ClassIdParams,
  ClassList,
  ClassSession,
  type ClassSessionDoc,
  ClassSessionIdParams,
  ClassSessionList,
  ClassSessionListQuery,
  CreateClassBody,
  CreateClassSessionBody,
  CreateNucleusBody,
  Nucleus,
  type NucleusDoc,
  NucleusIdParams,
  NucleusList,
  PatchClassBody,
  PatchClassSessionBody,
  PatchNucleusBody,
  timesInOrder,
  toClass,
  toClassSession,
  toNucleus,
} from '../../domain/classes.js';
import { type ApiError, apiError } from '../../domain/errors.js';
import type { AppDeps } from '../deps.js';
import { defineRoute } from '../route.js';

const NOT_PAGED = 'Teams are small, so the list is not paged.';
const NUCLEUS_AND_CLASS_WRITES =
  'No permission of the contract covers nuclei and classes; `sessions.edit` opens this route to custom roles.';

const invalid = (path: string, message: string): ApiError =>
  apiError('VALIDATION_FAILED', undefined, { issues: [{ path, message }] });

const MAX_ATTEMPTS = 5;

/**
 * Reads, decides and writes until the write lands on the revision it read: after a concurrent change
 * the patch is applied again to the newer document, so neither change is lost. Only a document that
 * keeps changing answers 409.
 */
const patchWithRetry = async <D>(
  what: string,
  load: () => Promise<D | undefined>,
  write: (current: D) => Promise<E.Either<ApiError, D | 'CONFLICT'>>,
): Promise<E.Either<ApiError, D>> => {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    const current = await load();
    if (current === undefined) return E.left(apiError('NOT_FOUND', `No such ${what}.`));
    const written = await write(current);
    if (E.isLeft(written)) return written;
    if (written.right !== 'CONFLICT') return E.right(written.right);
  }
  return E.left(apiError('CONFLICT', `The ${what} kept changing while this request ran; try again.`));
};

/** `undefined` and `null` need no nucleus; an id must name one. */
const nucleusExists = async (deps: AppDeps, nucleusId: string | null | undefined): Promise<boolean> =>
  nucleusId === undefined || nucleusId === null || (await deps.classes.getNucleus(nucleusId)) !== undefined;

const unknownNucleus = () => invalid('body.nucleusId', 'no such nucleus');
const unknownClass = () => invalid('body.classId', 'no such class');
const timesOutOfOrder = () => invalid('body.endsAt', 'must be later than startsAt');

// ---- nuclei ----

export const listNucleiRoute = defineRoute({
  operationId: 'listNuclei',
  method: 'get',
  path: '/api/v1/nuclei',
  auth: 'bearer',
  summary: 'Every nucleus, ordered by name',
  description: NOT_PAGED,
  tags: ['nuclei'],
  response: { status: 200, description: 'The nuclei.', codec: NucleusList },
  handler: async ({ deps }) => E.right({ body: { items: (await deps.classes.listNuclei()).map(toNucleus) } }),
});

export const createNucleusRoute = defineRoute({
  operationId: 'createNucleus',
  method: 'post',
  path: '/api/v1/nuclei',
  auth: 'cadastro',
  permission: 'sessions.edit',
  summary: 'Create a nucleus',
  description: NUCLEUS_AND_CLASS_WRITES,
  tags: ['nuclei'],
  body: CreateNucleusBody,
  response: {
    status: 201,
    description: 'The new nucleus.',
    codec: Nucleus,
    headers: { Location: 'the nucleus' },
  },
  handler: async ({ body, deps }) => {
    const now = deps.clock().toISOString();
    const created = await deps.classes.createNucleus({ name: body.name, createdAt: now, updatedAt: now });
    return E.right({
      status: 201,
      headers: { Location: `/api/v1/nuclei/${created.nucleusId}` },
      body: toNucleus(created),
    });
  },
});

export const patchNucleusRoute = defineRoute({
  operationId: 'updateNucleus',
  method: 'patch',
  path: '/api/v1/nuclei/{nucleusId}',
  auth: 'cadastro',
  permission: 'sessions.edit',
  summary: 'Rename a nucleus',
  description: NUCLEUS_AND_CLASS_WRITES,
  tags: ['nuclei'],
  params: NucleusIdParams,
  body: PatchNucleusBody,
  response: { status: 200, description: 'The updated nucleus.', codec: Nucleus },
  errors: ['NOT_FOUND'],
  handler: async ({ params, body, deps }) => {
    const updated = await patchWithRetry(
      'nucleus',
      () => deps.classes.getNucleus(params.nucleusId),
      async (current: NucleusDoc) =>
        E.right(
          await deps.classes.updateNucleus(current, {
            name: body.name ?? current.name,
            createdAt: current.createdAt,
            updatedAt: deps.clock().toISOString(),
          }),
        ),
    );
    return E.map((n: NucleusDoc) => ({ body: toNucleus(n) }))(updated);
  },
});

// ---- classes ----

export const listClassesRoute = defineRoute({
  operationId: 'listClasses',
  method: 'get',
  path: '/api/v1/classes',
  auth: 'bearer',
  summary: 'Every class, ordered by name',
  description: NOT_PAGED,
  tags: ['classes'],
  response: { status: 200, description: 'The classes.', codec: ClassList },
  handler: async ({ deps }) => E.right({ body: { items: (await deps.classes.listClasses()).map(toClass) } }),
});

export const createClassRoute = defineRoute({
  operationId: 'createClass',
  method: 'post',
  path: '/api/v1/classes',
  auth: 'cadastro',
  permission: 'sessions.edit',
  summary: 'Create a class',
  description: `An unknown \`nucleusId\` is refused with 400. ${NUCLEUS_AND_CLASS_WRITES}`,
  tags: ['classes'],
  body: CreateClassBody,
  response: { status: 201, description: 'The new class.', codec: ClassC, headers: { Location: 'the class' } },
  handler: async ({ body, deps }) => {
    if (!(await nucleusExists(deps, body.nucleusId))) return E.left(unknownNucleus());
    const now = deps.clock().toISOString();
    const created = await deps.classes.createClass({
      name: body.name,
      nucleusId: body.nucleusId ?? null,
      capacity: body.capacity ?? null,
      childrenPerVolunteer: body.childrenPerVolunteer ?? null,
      createdAt: now,
      updatedAt: now,
    });
    return E.right({
      status: 201,
      headers: { Location: `/api/v1/classes/${created.classId}` },
      body: toClass(created),
    });
  },
});

export const patchClassRoute = defineRoute({
  operationId: 'updateClass',
  method: 'patch',
  path: '/api/v1/classes/{classId}',
  auth: 'cadastro',
  permission: 'sessions.edit',
  summary: "Rename a class, move it to another nucleus, or set its room's capacity",
  description:
    '`nucleusId: null` detaches the class; an unknown `nucleusId` is refused with 400. Sessions already ' +
    `recorded keep the nucleus they were written with. ${NUCLEUS_AND_CLASS_WRITES}`,
  tags: ['classes'],
  params: ClassIdParams,
  body: PatchClassBody,
  response: { status: 200, description: 'The updated class.', codec: ClassC },
  errors: ['NOT_FOUND'],
  handler: async ({ params, body, deps }) => {
    const updated = await patchWithRetry(
      'class',
      () => deps.classes.getClass(params.classId),
      async (current: ClassDoc) => {
        if (!(await nucleusExists(deps, body.nucleusId))) return E.left(unknownNucleus());
        return E.right(
          await deps.classes.updateClass(current, {
            name: body.name ?? current.name,
            nucleusId: body.nucleusId === undefined ? current.nucleusId : body.nucleusId,
            capacity: body.capacity === undefined ? (current.capacity ?? null) : body.capacity,
            childrenPerVolunteer:
              body.childrenPerVolunteer === undefined
                ? (current.childrenPerVolunteer ?? null)
                : body.childrenPerVolunteer,
            createdAt: current.createdAt,
            updatedAt: deps.clock().toISOString(),
          }),
        );
      },
    );
    return E.map((c: ClassDoc) => ({ body: toClass(c) }))(updated);
  },
});

// ---- class sessions ----

export const listClassSessionsRoute = defineRoute({
  operationId: 'listClassSessions',
  method: 'get',
  path: '/api/v1/sessions',
  auth: 'bearer',
  summary: 'Class sessions, ordered by date, start and title',
  description: `Optionally only one \`date\` and / or one \`classId\`. ${NOT_PAGED}`,
  tags: ['sessions'],
  query: ClassSessionListQuery,
  response: { status: 200, description: 'The sessions.', codec: ClassSessionList },
  handler: async ({ query, deps }) =>
    E.right({ body: { items: (await deps.classes.listSessions(query)).map(toClassSession) } }),
});

export const createClassSessionRoute = defineRoute({
  operationId: 'createClassSession',
  method: 'post',
  path: '/api/v1/sessions',
  auth: 'cadastro',
  permission: 'sessions.add',
  summary: 'Schedule a meeting of a class',
  description:
    'An unknown `classId` is refused with 400, and so is an `endsAt` not later than `startsAt`. ' +
    '`nucleusId` is copied from the class. The `sessions.add` permission opens this route to custom roles.',
  tags: ['sessions'],
  body: CreateClassSessionBody,
  response: {
    status: 201,
    description: 'The new session.',
    codec: ClassSession,
    headers: { Location: 'the session' },
  },
  handler: async ({ body, deps }) => {
    const cls = await deps.classes.getClass(body.classId);
    if (cls === undefined) return E.left(unknownClass());
    const startsAt = body.startsAt ?? null;
    const endsAt = body.endsAt ?? null;
    if (!timesInOrder(startsAt, endsAt)) return E.left(timesOutOfOrder());
    const now = deps.clock().toISOString();
    const created = await deps.classes.createSession({
      classId: cls.classId,
      nucleusId: cls.nucleusId,
      date: body.date,
      title: body.title ?? null,
      startsAt,
      endsAt,
      createdAt: now,
      updatedAt: now,
    });
    return E.right({
      status: 201,
      headers: { Location: `/api/v1/sessions/${created.sessionId}` },
      body: toClassSession(created),
    });
  },
});

export const patchClassSessionRoute = defineRoute({
  operationId: 'updateClassSession',
  method: 'patch',
  path: '/api/v1/sessions/{sessionId}',
  auth: 'cadastro',
  permission: 'sessions.edit',
  summary: 'Change a class session',
  description:
    'Any subset of `classId`, `date`, `title`, `startsAt`, `endsAt`; `null` clears an optional field. ' +
    '`nucleusId` is copied again from the (possibly new) class. The `sessions.edit` permission opens this ' +
    'route to custom roles.',
  tags: ['sessions'],
  params: ClassSessionIdParams,
  body: PatchClassSessionBody,
  response: { status: 200, description: 'The updated session.', codec: ClassSession },
  errors: ['NOT_FOUND'],
  handler: async ({ params, body, deps }) => {
    const updated = await patchWithRetry(
      'session',
      () => deps.classes.getSession(params.sessionId),
      async (current: ClassSessionDoc) => {
        const cls = await deps.classes.getClass(body.classId ?? current.classId);
        if (cls === undefined && body.classId !== undefined) return E.left(unknownClass());
        const startsAt = body.startsAt === undefined ? current.startsAt : body.startsAt;
        const endsAt = body.endsAt === undefined ? current.endsAt : body.endsAt;
        if (!timesInOrder(startsAt, endsAt)) return E.left(timesOutOfOrder());
        return E.right(
          await deps.classes.updateSession(current, {
            classId: cls?.classId ?? current.classId,
            // Classes are never deleted, so a missing class is damage; the session keeps what it had.
            nucleusId: cls === undefined ? current.nucleusId : cls.nucleusId,
            date: body.date ?? current.date,
            title: body.title === undefined ? current.title : body.title,
            startsAt,
            endsAt,
            createdAt: current.createdAt,
            updatedAt: deps.clock().toISOString(),
          }),
        );
      },
    );
    return E.map((s: ClassSessionDoc) => ({ body: toClassSession(s) }))(updated);
  },
});

export const classesRoutes = [
  listNucleiRoute,
  createNucleusRoute,
  patchNucleusRoute,
  listClassesRoute,
  createClassRoute,
  patchClassRoute,
  listClassSessionsRoute,
  createClassSessionRoute,
  patchClassSessionRoute,
];
