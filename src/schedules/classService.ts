/**
 * Nuclei, classes and class sessions: created, listed, changed, deactivated and reactivated. A session
 * copies its nucleus from its class; an unknown nucleus or class and a session ending before it starts
 * are refused, and so is placing an active class or session under a deactivated nucleus or class
 * (`rules/deactivation.ts`). A change is read, decided and written until the write lands on the
 * revision it read, so a concurrent change is applied to, not lost.
 */
import * as E from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import {
  type ActivityStatus,
  type ClassDoc,
  type ClassSessionDoc,
  type ClassSessionFilter,
  type CreateClassBody,
  type CreateClassSessionBody,
  type CreateNucleusBody,
  isActive,
  type NucleusDoc,
  type PatchClassBody,
  type PatchClassSessionBody,
  type PatchNucleusBody,
  statusOf,
  timesInOrder,
} from '../domain/classes.js';
import { type ApiError, apiError } from '../domain/errors.js';
import {
  type Deactivatable,
  decideStatusChange,
  placementRefusal,
  type StatusChange,
  type StatusRefusal,
} from '../rules/deactivation.js';
import type { ClassStore } from '../store/classes.js';

export interface ClassServiceDeps {
  readonly classes: ClassStore;
  readonly clock: () => Date;
  /**
   * Run once a class is reactivated: its schedules make the sessions they skipped while it was
   * deactivated, so today's meeting reaches the tablets now rather than at the next hourly run.
   */
  readonly afterClassReactivated?: (classId: string) => Promise<unknown>;
}

/** Whether a list leaves deactivated records out (the default) or shows them too. */
export interface ListOptions {
  readonly includeInactive?: boolean;
}

type Outcome<D> = Promise<E.Either<ApiError, D>>;

export interface ClassService {
  listNuclei(options?: ListOptions): Promise<NucleusDoc[]>;
  createNucleus(input: t.TypeOf<typeof CreateNucleusBody>): Outcome<NucleusDoc>;
  patchNucleus(nucleusId: string, input: t.TypeOf<typeof PatchNucleusBody>): Outcome<NucleusDoc>;
  listClasses(options?: ListOptions): Promise<ClassDoc[]>;
  createClass(input: t.TypeOf<typeof CreateClassBody>): Outcome<ClassDoc>;
  patchClass(classId: string, input: t.TypeOf<typeof PatchClassBody>): Outcome<ClassDoc>;
  /** A session of a deactivated class counts as inactive here, whatever its own status. */
  listSessions(filter: ClassSessionFilter & ListOptions): Promise<ClassSessionDoc[]>;
  createSession(input: t.TypeOf<typeof CreateClassSessionBody>): Outcome<ClassSessionDoc>;
  patchSession(sessionId: string, input: t.TypeOf<typeof PatchClassSessionBody>): Outcome<ClassSessionDoc>;
  setNucleusStatus(nucleusId: string, change: StatusChange): Outcome<NucleusDoc>;
  setClassStatus(classId: string, change: StatusChange): Outcome<ClassDoc>;
  setSessionStatus(sessionId: string, change: StatusChange): Outcome<ClassSessionDoc>;
}

const invalid = (path: string, message: string): ApiError =>
  apiError('VALIDATION_FAILED', undefined, { issues: [{ path, message }] });
const unknownNucleus = () => invalid('body.nucleusId', 'no such nucleus');
const unknownClass = () => invalid('body.classId', 'no such class');
const timesOutOfOrder = () => invalid('body.endsAt', 'must be later than startsAt');
const nucleusNameTaken = () =>
  apiError('CONFLICT', 'Another nucleus has this name (case and accents aside).', {
    reason: 'NUCLEUS_NAME_TAKEN',
  });

/** The deactivation rule's refusals as the contract answers them: 409 `CONFLICT` with the reason. */
export const statusRefusalError = (kind: Deactivatable, refusal: StatusRefusal): ApiError => {
  switch (refusal.reason) {
    case 'ALREADY_DEACTIVATED':
      return apiError('CONFLICT', `The ${kind} is already deactivated.`, { reason: refusal.reason });
    case 'ALREADY_ACTIVE':
      return apiError('CONFLICT', `The ${kind} is already active.`, { reason: refusal.reason });
    case 'NUCLEUS_HAS_ACTIVE_CLASSES':
      return apiError(
        'CONFLICT',
        'The nucleus still has active classes (`details.classIds`); deactivate them or move them first.',
        { reason: refusal.reason, classIds: refusal.classIds },
      );
    case 'NUCLEUS_DEACTIVATED':
      return apiError('CONFLICT', 'The nucleus is deactivated; reactivate it first.', {
        reason: refusal.reason,
      });
    case 'CLASS_DEACTIVATED':
      return apiError('CONFLICT', 'The class is deactivated; reactivate it first.', {
        reason: refusal.reason,
      });
  }
};

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
): Outcome<D> => {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    const current = await load();
    if (current === undefined) return E.left(apiError('NOT_FOUND', `No such ${what}.`));
    const written = await write(current);
    if (E.isLeft(written)) return written;
    if (written.right !== 'CONFLICT') return E.right(written.right);
  }
  return E.left(apiError('CONFLICT', `The ${what} kept changing while this request ran; try again.`));
};

export const classService = ({ classes, clock, afterClassReactivated }: ClassServiceDeps): ClassService => {
  const now = () => clock().toISOString();
  /**
   * The status of the nucleus an id names: `null` for none (`undefined` or `null`), `undefined` for an
   * id that names no nucleus.
   */
  const nucleusStatus = async (
    nucleusId: string | null | undefined,
  ): Promise<ActivityStatus | null | undefined> => {
    if (nucleusId === undefined || nucleusId === null) return null;
    const found = await classes.getNucleus(nucleusId);
    return found === undefined ? undefined : statusOf(found);
  };
  /** A refusal for an active class placed in `nucleusId` (created or moved there), or none. */
  const classPlacement = async (
    nucleusId: string | null | undefined,
    active: boolean,
  ): Promise<ApiError | undefined> => {
    const status = await nucleusStatus(nucleusId);
    if (status === undefined) return unknownNucleus();
    const refused = active ? placementRefusal('class', status) : undefined;
    return refused === undefined ? undefined : statusRefusalError('class', refused);
  };

  /** Reads, decides and writes a status change until it lands on the revision it read. */
  const changeStatus = <D extends NucleusDoc | ClassDoc | ClassSessionDoc>(
    kind: Deactivatable,
    load: () => Promise<D | undefined>,
    change: StatusChange,
    facts: (current: D) => Promise<{ parent: ActivityStatus | null; activeClassIds: ReadonlyArray<string> }>,
  ): Outcome<D> =>
    patchWithRetry(kind, load, async (current: D) => {
      const next = decideStatusChange(kind, change, { status: statusOf(current), ...(await facts(current)) });
      if (E.isLeft(next)) return E.left(statusRefusalError(kind, next.left));
      return E.right(await classes.setStatus(current, next.right, now()));
    });

  return {
    async listNuclei(options = {}) {
      const all = await classes.listNuclei();
      return options.includeInactive === true ? all : all.filter(isActive);
    },

    async createNucleus(input) {
      const at = now();
      const created = await classes.createNucleus({ name: input.name, createdAt: at, updatedAt: at });
      return created === 'NAME_TAKEN' ? E.left(nucleusNameTaken()) : E.right(created);
    },

    patchNucleus: (nucleusId, input) =>
      patchWithRetry(
        'nucleus',
        () => classes.getNucleus(nucleusId),
        async (current: NucleusDoc) => {
          const written = await classes.updateNucleus(current, {
            name: input.name ?? current.name,
            createdAt: current.createdAt,
            updatedAt: now(),
          });
          return written === 'NAME_TAKEN' ? E.left(nucleusNameTaken()) : E.right(written);
        },
      ),

    async listClasses(options = {}) {
      const all = await classes.listClasses();
      return options.includeInactive === true ? all : all.filter(isActive);
    },

    async createClass(input) {
      const refused = await classPlacement(input.nucleusId, true);
      if (refused !== undefined) return E.left(refused);
      const at = now();
      return E.right(
        await classes.createClass({
          name: input.name,
          nucleusId: input.nucleusId ?? null,
          capacity: input.capacity ?? null,
          childrenPerVolunteer: input.childrenPerVolunteer ?? null,
          ageRange: input.ageRange ?? null,
          createdAt: at,
          updatedAt: at,
        }),
      );
    },

    patchClass: (classId, input) =>
      patchWithRetry(
        'class',
        () => classes.getClass(classId),
        async (current: ClassDoc) => {
          // Only a move is checked: a class may stay where it is whatever its nucleus became.
          const moved = input.nucleusId !== undefined && input.nucleusId !== current.nucleusId;
          const refused = moved ? await classPlacement(input.nucleusId, isActive(current)) : undefined;
          if (refused !== undefined) return E.left(refused);
          return E.right(
            await classes.updateClass(current, {
              name: input.name ?? current.name,
              nucleusId: input.nucleusId === undefined ? current.nucleusId : input.nucleusId,
              capacity: input.capacity === undefined ? (current.capacity ?? null) : input.capacity,
              childrenPerVolunteer:
                input.childrenPerVolunteer === undefined
                  ? (current.childrenPerVolunteer ?? null)
                  : input.childrenPerVolunteer,
              ageRange: input.ageRange === undefined ? (current.ageRange ?? null) : input.ageRange,
              createdAt: current.createdAt,
              updatedAt: now(),
            }),
          );
        },
      ),

    async listSessions({ includeInactive, ...filter }) {
      const all = await classes.listSessions(filter);
      if (includeInactive === true) return all;
      const closed = new Set((await classes.listClasses()).filter((c) => !isActive(c)).map((c) => c.classId));
      return all.filter((s) => isActive(s) && !closed.has(s.classId));
    },

    async createSession(input) {
      const cls = await classes.getClass(input.classId);
      if (cls === undefined) return E.left(unknownClass());
      const closed = placementRefusal('session', statusOf(cls));
      if (closed !== undefined) return E.left(statusRefusalError('session', closed));
      const startsAt = input.startsAt ?? null;
      const endsAt = input.endsAt ?? null;
      if (!timesInOrder(startsAt, endsAt)) return E.left(timesOutOfOrder());
      const at = now();
      return E.right(
        await classes.createSession({
          classId: cls.classId,
          nucleusId: cls.nucleusId,
          date: input.date,
          title: input.title ?? null,
          startsAt,
          endsAt,
          createdAt: at,
          updatedAt: at,
        }),
      );
    },

    patchSession: (sessionId, input) =>
      patchWithRetry(
        'session',
        () => classes.getSession(sessionId),
        async (current: ClassSessionDoc) => {
          const cls = await classes.getClass(input.classId ?? current.classId);
          if (cls === undefined && input.classId !== undefined) return E.left(unknownClass());
          // Only a move is checked: a session stays editable in a class deactivated since.
          const moved = cls !== undefined && cls.classId !== current.classId && isActive(current);
          const closed = moved ? placementRefusal('session', statusOf(cls)) : undefined;
          if (closed !== undefined) return E.left(statusRefusalError('session', closed));
          const startsAt = input.startsAt === undefined ? current.startsAt : input.startsAt;
          const endsAt = input.endsAt === undefined ? current.endsAt : input.endsAt;
          if (!timesInOrder(startsAt, endsAt)) return E.left(timesOutOfOrder());
          return E.right(
            await classes.updateSession(current, {
              classId: cls?.classId ?? current.classId,
              // Classes are never deleted, so a missing class is damage; the session keeps what it had.
              nucleusId: cls === undefined ? current.nucleusId : cls.nucleusId,
              date: input.date ?? current.date,
              title: input.title === undefined ? current.title : input.title,
              startsAt,
              endsAt,
              createdAt: current.createdAt,
              updatedAt: now(),
            }),
          );
        },
      ),

    setNucleusStatus: (nucleusId, change) =>
      changeStatus(
        'nucleus',
        () => classes.getNucleus(nucleusId),
        change,
        async (current) => ({
          parent: null,
          // Read only to deactivate: what reactivating a nucleus needs is its own status.
          activeClassIds:
            change === 'DEACTIVATE'
              ? (await classes.listClasses())
                  .filter((c) => c.nucleusId === current.nucleusId && isActive(c))
                  .map((c) => c.classId)
              : [],
        }),
      ),

    async setClassStatus(classId, change) {
      const changed = await changeStatus(
        'class',
        () => classes.getClass(classId),
        change,
        async (current) => ({
          parent: (await nucleusStatus(current.nucleusId)) ?? null,
          activeClassIds: [],
        }),
      );
      if (E.isRight(changed) && change === 'REACTIVATE' && afterClassReactivated !== undefined)
        await afterClassReactivated(classId);
      return changed;
    },

    setSessionStatus: (sessionId, change) =>
      changeStatus(
        'session',
        () => classes.getSession(sessionId),
        change,
        async (current) => {
          const cls = await classes.getClass(current.classId);
          // Classes are never deleted, so a missing class is damage: it closes nothing.
          return { parent: cls === undefined ? null : statusOf(cls), activeClassIds: [] };
        },
      ),
  };
};
