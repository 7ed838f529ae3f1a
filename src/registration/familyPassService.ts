/**
 * The family pass (decision 0049): the printable card of a child's family, the QR code's text for
 * the guardian's stub, and the revocation that replaces a lost card. A child's family is that of the
 * first guardian phone on its record (`passFamilyPhone`); its children are those the tablets' roster
 * lists for the family, with the child asked about, each read again so the card names only active
 * children who still share the phone.
 */
import * as E from 'fp-ts/lib/Either.js';
import { familyPassText } from '../crypto/familyPass.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { FamilyPassContent, FamilyPassFormat, FamilyPassIssued } from '../domain/familyPass.js';
import type { Actor } from '../domain/principal.js';
import type { RosterFamily } from '../domain/roster.js';
import type { StudentDoc } from '../domain/student.js';
import { familyGuardianName, firstName } from '../rules/familyPass.js';
import { familyPhone, passFamilyPhone } from '../rules/roster.js';
import type { FamilyPassStore } from '../store/familyPasses.js';
import type { StudentStore } from '../store/students.js';
import { familyKeyOf } from '../sync/rosterInput.js';
import { type CardText, familyPassCard } from './familyPassCard.js';

export interface FamilyPassServiceDeps {
  readonly students: Pick<StudentStore, 'get' | 'getMany'>;
  readonly passes: FamilyPassStore;
  /** The check-in secret (never leaves the server): family keys and passes are keyed by it. */
  readonly secret: (at: string) => Promise<Uint8Array>;
  /** The family as the tablets' roster has it. */
  readonly rosterFamily: (familyKey: string) => Promise<RosterFamily | undefined>;
  readonly clock: () => Date;
}

export interface FamilyPassService {
  card(
    studentId: string,
    format: FamilyPassFormat,
  ): Promise<
    E.Either<ApiError, { readonly body: Uint8Array; readonly mediaType: 'image/svg+xml' | 'image/png' }>
  >;
  content(studentId: string): Promise<E.Either<ApiError, FamilyPassContent>>;
  revoke(actor: Actor, studentId: string): Promise<E.Either<ApiError, FamilyPassIssued>>;
}

interface Family {
  readonly student: StudentDoc;
  /** The phone digits the family is computed from. */
  readonly digits: string;
  readonly familyKey: string;
  readonly secret: Uint8Array;
}

const phonesOf = (s: StudentDoc): string[] => s.phones.map((p) => p.number);

export const familyPassService = (deps: FamilyPassServiceDeps): FamilyPassService => {
  const familyOf = async (studentId: string): Promise<E.Either<ApiError, Family>> => {
    const student = await deps.students.get(studentId);
    if (student === undefined) return E.left(apiError('NOT_FOUND', 'No such student.'));
    if (student.status === 'DELETED')
      return E.left(apiError('CONFLICT', 'The student is deleted.', { reason: 'STUDENT_DELETED' }));
    const digits = passFamilyPhone(phonesOf(student));
    if (digits === undefined) return E.left(apiError('NO_FAMILY'));
    const secret = await deps.secret(deps.clock().toISOString());
    return E.right({ student, digits, familyKey: familyKeyOf(secret)(digits), secret });
  };

  const passOf = async (family: Family): Promise<string> =>
    familyPassText(family.secret, family.familyKey, await deps.passes.generation(family.familyKey));

  /** The first names the card shows: the family's guardian, and its active children by name. */
  const cardText = async (family: Family): Promise<CardText> => {
    const listed = (await deps.rosterFamily(family.familyKey))?.studentIds ?? [];
    const read = await deps.students.getMany([...new Set([...listed, family.student.studentId])]);
    const children = [...read.values()]
      .filter((s) => s.status === 'ACTIVE' && phonesOf(s).some((p) => familyPhone(p) === family.digits))
      .sort((a, b) => a.displayName.localeCompare(b.displayName, 'pt-BR'));
    return {
      guardianName: familyGuardianName(children.map((c) => c.guardianName)),
      childrenNames: children.map((c) => firstName(c.displayName)),
    };
  };

  return {
    async card(studentId, format) {
      const family = await familyOf(studentId);
      if (E.isLeft(family)) return family;
      const [content, text] = await Promise.all([passOf(family.right), cardText(family.right)]);
      return E.right(await familyPassCard(content, text, format));
    },
    async content(studentId) {
      const family = await familyOf(studentId);
      if (E.isLeft(family)) return family;
      return E.right({ studentId, content: await passOf(family.right) });
    },
    async revoke(actor, studentId) {
      const family = await familyOf(studentId);
      if (E.isLeft(family)) return family;
      const at = deps.clock().toISOString();
      const stored = await deps.passes.revoke(
        family.right.familyKey,
        at,
        actor.principal.userId,
        actor.requestKey,
      );
      return E.right({ studentId, generation: stored.generation, issuedAt: stored.revokedAt });
    },
  };
};
