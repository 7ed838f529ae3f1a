/**
 * Nuclei, classes and class sessions: created, listed and changed. A session copies its nucleus from
 * its class; an unknown nucleus or class and a session ending before it starts are refused. A change
 * is read, decided and written until the write lands on the revision it read, so a concurrent change
 * is applied to, not lost.
 */
import * as E from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import {
  type ClassDoc,
  type ClassSessionDoc,
  type ClassSessionFilter,
  type CreateClassBody,
  type CreateClassSessionBody,
  type CreateNucleusBody,
  type NucleusDoc,
  type PatchClassBody,
  type PatchClassSessionBody,
  type PatchNucleusBody,
  timesInOrder,
} from '../domain/classes.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { ClassStore } from '../store/classes.js';

export interface ClassServiceDeps {
  readonly classes: ClassStore;
  readonly clock: () => Date;
}

type Outcome<D> = Promise<E.Either<ApiError, D>>;

export interface ClassService {
  listNuclei(): Promise<NucleusDoc[]>;
  createNucleus(input: t.TypeOf<typeof CreateNucleusBody>): Outcome<NucleusDoc>;
  patchNucleus(nucleusId: string, input: t.TypeOf<typeof PatchNucleusBody>): Outcome<NucleusDoc>;
  listClasses(): Promise<ClassDoc[]>;
  createClass(input: t.TypeOf<typeof CreateClassBody>): Outcome<ClassDoc>;
  patchClass(classId: string, input: t.TypeOf<typeof PatchClassBody>): Outcome<ClassDoc>;
  listSessions(filter: ClassSessionFilter): Promise<ClassSessionDoc[]>;
  createSession(input: t.TypeOf<typeof CreateClassSessionBody>): Outcome<ClassSessionDoc>;
  patchSession(sessionId: string, input: t.TypeOf<typeof PatchClassSessionBody>): Outcome<ClassSessionDoc>;
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

export const classService = ({ classes, clock }: ClassServiceDeps): ClassService => {
  const now = () => clock().toISOString();
  /** `undefined` and `null` need no nucleus; an id must name one. */
  const nucleusExists = async (nucleusId: string | null | undefined): Promise<boolean> =>
    nucleusId === undefined || nucleusId === null || (await classes.getNucleus(nucleusId)) !== undefined;

  return {
    listNuclei: () => classes.listNuclei(),

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

    listClasses: () => classes.listClasses(),

    async createClass(input) {
      if (!(await nucleusExists(input.nucleusId))) return E.left(unknownNucleus());
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
          if (!(await nucleusExists(input.nucleusId))) return E.left(unknownNucleus());
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

    listSessions: (filter) => classes.listSessions(filter),

    async createSession(input) {
      const cls = await classes.getClass(input.classId);
      if (cls === undefined) return E.left(unknownClass());
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
  };
};
