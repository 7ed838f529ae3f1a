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
  toClass,
  toClassSession,
  toNucleus,
} from '../../domain/classes.js';
import { defineRoute } from '../route.js';

const NOT_PAGED = 'Teams are small, so the list is not paged.';
const NUCLEUS_AND_CLASS_WRITES =
  'No permission of the contract covers nuclei and classes; `sessions.edit` opens this route to custom roles.';

// ---- nuclei ----

const NUCLEUS_NAMES =
  "A name another nucleus has, case and accents aside ('Zona Sul', 'zona sul', 'Zôna Sul'), is 409 " +
  '`CONFLICT` with `details.reason` `NUCLEUS_NAME_TAKEN`.';

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
  description: `${NUCLEUS_AND_CLASS_WRITES} ${NUCLEUS_NAMES}`,
  tags: ['nuclei'],
  body: CreateNucleusBody,
  response: {
    status: 201,
    description: 'The new nucleus.',
    codec: Nucleus,
    headers: { Location: 'the nucleus' },
  },
  errors: ['CONFLICT'],
  handler: async ({ body, deps }) =>
    E.map((created: NucleusDoc) => ({
      status: 201,
      headers: { Location: `/api/v1/nuclei/${created.nucleusId}` },
      body: toNucleus(created),
    }))(await deps.classes.createNucleus(body)),
});

export const patchNucleusRoute = defineRoute({
  operationId: 'updateNucleus',
  method: 'patch',
  path: '/api/v1/nuclei/{nucleusId}',
  auth: 'cadastro',
  permission: 'sessions.edit',
  summary: 'Rename a nucleus',
  description: `${NUCLEUS_AND_CLASS_WRITES} ${NUCLEUS_NAMES} Nuclei that shared a name before names were unique keep it until renamed.`,
  tags: ['nuclei'],
  params: NucleusIdParams,
  body: PatchNucleusBody,
  response: { status: 200, description: 'The updated nucleus.', codec: Nucleus },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async ({ params, body, deps }) =>
    E.map((n: NucleusDoc) => ({ body: toNucleus(n) }))(
      await deps.classes.patchNucleus(params.nucleusId, body),
    ),
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
  handler: async ({ body, deps }) =>
    E.map((created: ClassDoc) => ({
      status: 201,
      headers: { Location: `/api/v1/classes/${created.classId}` },
      body: toClass(created),
    }))(await deps.classes.createClass(body)),
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
  handler: async ({ params, body, deps }) =>
    E.map((c: ClassDoc) => ({ body: toClass(c) }))(await deps.classes.patchClass(params.classId, body)),
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
  handler: async ({ body, deps }) =>
    E.map((created: ClassSessionDoc) => ({
      status: 201,
      headers: { Location: `/api/v1/sessions/${created.sessionId}` },
      body: toClassSession(created),
    }))(await deps.classes.createSession(body)),
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
  handler: async ({ params, body, deps }) =>
    E.map((s: ClassSessionDoc) => ({ body: toClassSession(s) }))(
      await deps.classes.patchSession(params.sessionId, body),
    ),
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
