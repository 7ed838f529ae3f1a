/**
 * Nuclei, classes and class sessions. Anyone signed in reads them (every role needs the day's
 * sessions); ADMIN and CADASTRO write them. The contract names no permission for nuclei and classes,
 * so their writes reuse `sessions.edit`: a custom role that may edit sessions may also maintain the
 * classes they belong to. Creating a session needs `sessions.add`, changing one `sessions.edit`.
 * Deactivating and reactivating is the ADMIN's alone, as deactivating a user is (decision 0047): it
 * closes the door to check-ins.
 */
import * as E from 'fp-ts/lib/Either.js';
import {
  ActivityListQuery,
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
import type { StatusChange } from '../../rules/deactivation.js';
import { defineRoute } from '../route.js';

const NOT_PAGED = 'Teams are small, so the list is not paged.';
const INACTIVE_LEFT_OUT = 'Deactivated ones are left out unless `includeInactive=true`.';

/** The words each status change is described with. */
const CHANGES = {
  DEACTIVATE: {
    action: 'deactivate',
    summary: 'Deactivate',
    again: 'A second deactivation is 409 (`details.reason` `ALREADY_DEACTIVATED`).',
  },
  REACTIVATE: {
    action: 'reactivate',
    summary: 'Reactivate',
    again: 'Reactivating an active one is 409 (`details.reason` `ALREADY_ACTIVE`).',
  },
} as const satisfies Record<StatusChange, unknown>;
const KEEPS_HISTORY =
  'ADMIN only. Nothing is deleted: reports, exports and the audit log go on naming it. No body is needed.';
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
  description: `${INACTIVE_LEFT_OUT} ${NOT_PAGED}`,
  tags: ['nuclei'],
  query: ActivityListQuery,
  response: { status: 200, description: 'The nuclei.', codec: NucleusList },
  handler: async ({ query, deps }) =>
    E.right({
      body: {
        items: (await deps.classes.listNuclei({ includeInactive: query.includeInactive === 'true' })).map(
          toNucleus,
        ),
      },
    }),
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

const nucleusStatusRoute = (change: StatusChange) =>
  defineRoute({
    operationId: `${CHANGES[change].action}Nucleus`,
    method: 'post',
    path: `/api/v1/nuclei/{nucleusId}/${CHANGES[change].action}`,
    auth: 'admin',
    summary: `${CHANGES[change].summary} a nucleus`,
    description:
      change === 'DEACTIVATE'
        ? 'Refused with 409 (`details.reason` `NUCLEUS_HAS_ACTIVE_CLASSES`, `details.classIds`) while any of its ' +
          `classes is active: deactivate or move them first; nothing cascades. ${CHANGES[change].again} ${KEEPS_HISTORY}`
        : `Its classes stay as they are: each is reactivated on its own. ${CHANGES[change].again} ${KEEPS_HISTORY}`,
    tags: ['nuclei'],
    params: NucleusIdParams,
    response: { status: 200, description: 'The nucleus as it now stands.', codec: Nucleus },
    errors: ['NOT_FOUND', 'CONFLICT'],
    handler: async ({ params, deps }) =>
      E.map((n: NucleusDoc) => ({ body: toNucleus(n) }))(
        await deps.classes.setNucleusStatus(params.nucleusId, change),
      ),
  });
export const deactivateNucleusRoute = nucleusStatusRoute('DEACTIVATE');
export const reactivateNucleusRoute = nucleusStatusRoute('REACTIVATE');

// ---- classes ----

export const listClassesRoute = defineRoute({
  operationId: 'listClasses',
  method: 'get',
  path: '/api/v1/classes',
  auth: 'bearer',
  summary: 'Every class, ordered by name',
  description: `${INACTIVE_LEFT_OUT} ${NOT_PAGED}`,
  tags: ['classes'],
  query: ActivityListQuery,
  response: { status: 200, description: 'The classes.', codec: ClassList },
  handler: async ({ query, deps }) =>
    E.right({
      body: {
        items: (await deps.classes.listClasses({ includeInactive: query.includeInactive === 'true' })).map(
          toClass,
        ),
      },
    }),
});

export const createClassRoute = defineRoute({
  operationId: 'createClass',
  method: 'post',
  path: '/api/v1/classes',
  auth: 'cadastro',
  permission: 'sessions.edit',
  summary: 'Create a class',
  description:
    'An unknown `nucleusId` is refused with 400, a deactivated one with 409 (`details.reason` ' +
    `\`NUCLEUS_DEACTIVATED\`). ${NUCLEUS_AND_CLASS_WRITES}`,
  tags: ['classes'],
  body: CreateClassBody,
  response: { status: 201, description: 'The new class.', codec: ClassC, headers: { Location: 'the class' } },
  errors: ['CONFLICT'],
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
    '`nucleusId: null` detaches the class; an unknown `nucleusId` is refused with 400; moving an active class ' +
    'to a deactivated nucleus with 409 (`details.reason` `NUCLEUS_DEACTIVATED`). Sessions already ' +
    `recorded keep the nucleus they were written with. ${NUCLEUS_AND_CLASS_WRITES}`,
  tags: ['classes'],
  params: ClassIdParams,
  body: PatchClassBody,
  response: { status: 200, description: 'The updated class.', codec: ClassC },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async ({ params, body, deps }) =>
    E.map((c: ClassDoc) => ({ body: toClass(c) }))(await deps.classes.patchClass(params.classId, body)),
});

const classStatusRoute = (change: StatusChange) =>
  defineRoute({
    operationId: `${CHANGES[change].action}Class`,
    method: 'post',
    path: `/api/v1/classes/{classId}/${CHANGES[change].action}`,
    auth: 'admin',
    summary: `${CHANGES[change].summary} a class`,
    description:
      change === 'DEACTIVATE'
        ? 'Its sessions take no check-ins (409 `CONFLICT`, `details.reason` `CLASS_DEACTIVATED`) and its ' +
          'schedules make no sessions until it is reactivated; children already in a room are still checked out. ' +
          `${CHANGES[change].again} ${KEEPS_HISTORY}`
        : 'Refused with 409 (`details.reason` `NUCLEUS_DEACTIVATED`) while its nucleus is deactivated. Its ' +
          `schedules make the sessions they skipped at once. ${CHANGES[change].again} ${KEEPS_HISTORY}`,
    tags: ['classes'],
    params: ClassIdParams,
    response: { status: 200, description: 'The class as it now stands.', codec: ClassC },
    errors: ['NOT_FOUND', 'CONFLICT'],
    handler: async ({ params, deps }) =>
      E.map((c: ClassDoc) => ({ body: toClass(c) }))(
        await deps.classes.setClassStatus(params.classId, change),
      ),
  });
export const deactivateClassRoute = classStatusRoute('DEACTIVATE');
export const reactivateClassRoute = classStatusRoute('REACTIVATE');

// ---- class sessions ----

export const listClassSessionsRoute = defineRoute({
  operationId: 'listClassSessions',
  method: 'get',
  path: '/api/v1/sessions',
  auth: 'bearer',
  summary: 'Class sessions, ordered by date, start and title',
  description:
    'Optionally only one `date` and / or one `classId`. Deactivated sessions, and the sessions of deactivated ' +
    `classes, are left out unless \`includeInactive=true\`. ${NOT_PAGED}`,
  tags: ['sessions'],
  query: ClassSessionListQuery,
  response: { status: 200, description: 'The sessions.', codec: ClassSessionList },
  handler: async ({ query, deps }) =>
    E.right({
      body: {
        items: (
          await deps.classes.listSessions({ ...query, includeInactive: query.includeInactive === 'true' })
        ).map(toClassSession),
      },
    }),
});

export const createClassSessionRoute = defineRoute({
  operationId: 'createClassSession',
  method: 'post',
  path: '/api/v1/sessions',
  auth: 'cadastro',
  permission: 'sessions.add',
  summary: 'Schedule a meeting of a class',
  description:
    'An unknown `classId` is refused with 400, and so is an `endsAt` not later than `startsAt`; a deactivated ' +
    'class with 409 (`details.reason` `CLASS_DEACTIVATED`). `nucleusId` is copied from the class. The ' +
    '`sessions.add` permission opens this route to custom roles.',
  tags: ['sessions'],
  body: CreateClassSessionBody,
  response: {
    status: 201,
    description: 'The new session.',
    codec: ClassSession,
    headers: { Location: 'the session' },
  },
  errors: ['CONFLICT'],
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
    '`nucleusId` is copied again from the (possibly new) class. Moving an active session to a deactivated ' +
    'class is 409 (`details.reason` `CLASS_DEACTIVATED`). The `sessions.edit` permission opens this ' +
    'route to custom roles.',
  tags: ['sessions'],
  params: ClassSessionIdParams,
  body: PatchClassSessionBody,
  response: { status: 200, description: 'The updated session.', codec: ClassSession },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async ({ params, body, deps }) =>
    E.map((s: ClassSessionDoc) => ({ body: toClassSession(s) }))(
      await deps.classes.patchSession(params.sessionId, body),
    ),
});

const sessionStatusRoute = (change: StatusChange) =>
  defineRoute({
    operationId: `${CHANGES[change].action}ClassSession`,
    method: 'post',
    path: `/api/v1/sessions/{sessionId}/${CHANGES[change].action}`,
    auth: 'admin',
    summary: `${CHANGES[change].summary} a class session`,
    description:
      change === 'DEACTIVATE'
        ? 'It takes no check-ins (409 `CONFLICT`, `details.reason` `SESSION_DEACTIVATED`) and the tablets stop ' +
          'offering it, but for the check-out of children still in the room. A schedule leaves its status as it ' +
          `is. ${CHANGES[change].again} ${KEEPS_HISTORY}`
        : `Refused with 409 (\`details.reason\` \`CLASS_DEACTIVATED\`) while its class is deactivated. ${CHANGES[change].again} ${KEEPS_HISTORY}`,
    tags: ['sessions'],
    params: ClassSessionIdParams,
    response: { status: 200, description: 'The session as it now stands.', codec: ClassSession },
    errors: ['NOT_FOUND', 'CONFLICT'],
    handler: async ({ params, deps }) =>
      E.map((s: ClassSessionDoc) => ({ body: toClassSession(s) }))(
        await deps.classes.setSessionStatus(params.sessionId, change),
      ),
  });
export const deactivateClassSessionRoute = sessionStatusRoute('DEACTIVATE');
export const reactivateClassSessionRoute = sessionStatusRoute('REACTIVATE');

export const classesRoutes = [
  listNucleiRoute,
  createNucleusRoute,
  patchNucleusRoute,
  deactivateNucleusRoute,
  reactivateNucleusRoute,
  listClassesRoute,
  createClassRoute,
  patchClassRoute,
  deactivateClassRoute,
  reactivateClassRoute,
  listClassSessionsRoute,
  createClassSessionRoute,
  patchClassSessionRoute,
  deactivateClassSessionRoute,
  reactivateClassSessionRoute,
];
