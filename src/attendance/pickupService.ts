/**
 * The pickup list (N1 guardians from the record, N2 adults verified by a one-time code) and temporary
 * grants (N3). The gate's question, "may this adult collect this child now?", is answered by
 * `allowedAdults` together with the rules in `rules/checkin.ts`.
 */
import { createHash, randomInt, randomUUID } from 'node:crypto';
import * as E from 'fp-ts/lib/Either.js';
import { equalBytes } from '../crypto/bytes.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { AllowedAdult, GrantDoc, PickupEntryDoc } from '../domain/pickup.js';

export type { AllowedAdult } from '../domain/pickup.js';

import type { Actor } from '../domain/principal.js';
import type { StudentDoc } from '../domain/student.js';
import { detached } from '../lib/deadline.js';
import type { Notifier } from '../notify/notifier.js';
import { grantActive, grantWindow } from '../rules/checkin.js';
import { foldName } from '../rules/students.js';
import type { EventStore } from '../store/events.js';
import type { PickupStore } from '../store/pickups.js';
import type { StudentStore } from '../store/students.js';

export const OTP_TTL_MS = 10 * 60 * 1000;
export const OTP_MAX_ATTEMPTS = 5;

export interface PickupEntryView {
  readonly pickupId: string;
  readonly studentId: string;
  readonly level: 'N1' | 'N2';
  readonly name: string;
  readonly relationship: string;
  readonly phoneSuffix: string | null;
  readonly status: 'PENDING_VERIFICATION' | 'ACTIVE' | 'REVOKED';
}

const suffixOf = (phone: string | null | undefined): string | null =>
  phone === null || phone === undefined ? null : phone.replace(/\D/g, '').slice(-4);
const otpHash = (pickupId: string, code: string) =>
  createHash('sha256').update(`${pickupId}:${code}`, 'utf8').digest('hex');

/** Stable ids for the N1 entries, which live on the student record rather than in documents of their own. */
export const n1Id = (studentId: string, name: string): string =>
  `N1-${createHash('sha256')
    .update(`${studentId}:${foldName(name)}`, 'utf8')
    .digest('hex')
    .slice(0, 24)}`;

export const n1Entries = (student: StudentDoc): PickupEntryView[] =>
  [student.guardianName, ...(student.guardianNameAlt === null ? [] : [student.guardianNameAlt])].map(
    (name) => ({
      pickupId: n1Id(student.studentId, name),
      studentId: student.studentId,
      level: 'N1' as const,
      name,
      relationship: 'guardian',
      phoneSuffix: suffixOf(student.phones[0]?.number),
      status: 'ACTIVE' as const,
    }),
  );

export interface PickupServiceDeps {
  readonly pickups: PickupStore;
  readonly students: StudentStore;
  readonly events: EventStore;
  readonly notifier: Notifier;
  readonly clock: () => Date;
}

export interface PickupService {
  list(studentId: string): Promise<E.Either<ApiError, PickupEntryView[]>>;
  addAdult(
    actor: Actor,
    studentId: string,
    body: { name: string; relationship: string; phone: string },
  ): Promise<E.Either<ApiError, PickupEntryView>>;
  verify(
    actor: Actor,
    studentId: string,
    pickupId: string,
    code: string,
  ): Promise<E.Either<ApiError, PickupEntryView>>;
  grants(studentId: string): Promise<E.Either<ApiError, GrantDoc[]>>;
  createGrant(
    actor: Actor,
    studentId: string,
    body: {
      authorized_by_pickup_id: string;
      adultName: string;
      relationship: string;
      phone?: string;
      valid_from?: string;
      valid_until?: string;
    },
  ): Promise<E.Either<ApiError, GrantDoc>>;
  revokeGrant(
    actor: Actor,
    authorizationId: string,
    justification: string,
  ): Promise<E.Either<ApiError, GrantDoc>>;
  allowedAdults(student: StudentDoc): Promise<AllowedAdult[]>;
  /** The same for many students at once, from one read of every entry and grant. */
  allowedAdultsOfAll(students: ReadonlyArray<StudentDoc>): Promise<Map<string, AllowedAdult[]>>;
}

/** Who may collect a child at `at`: N1 guardians, active N2 entries, N3 grants inside their window. */
export const adultsFor = (
  student: StudentDoc,
  entries: ReadonlyArray<PickupEntryDoc>,
  grants: ReadonlyArray<GrantDoc>,
  at: Date,
): AllowedAdult[] => [
  ...n1Entries(student).map((e) => ({
    name: e.name,
    level: 'N1' as const,
    relationship: e.relationship,
    phones: student.phones.map((p) => p.number),
  })),
  ...entries
    .filter((e) => e.status === 'ACTIVE')
    .map((e) => ({ name: e.name, level: 'N2' as const, relationship: e.relationship, phones: [e.phone] })),
  ...grants
    .filter((g) =>
      grantActive({ validFrom: g.valid_from, validUntil: g.valid_until, revokedAt: g.revokedAt }, at),
    )
    .map((g) => ({
      name: g.adultName,
      level: 'N3' as const,
      relationship: g.relationship,
      phones: g.phone === null ? [] : [g.phone],
    })),
];

const entryView = (e: PickupEntryDoc): PickupEntryView => ({
  pickupId: e.pickupId,
  studentId: e.studentId,
  level: 'N2',
  name: e.name,
  relationship: e.relationship,
  phoneSuffix: suffixOf(e.phone),
  status: e.status,
});

export const pickupService = (deps: PickupServiceDeps): PickupService => {
  const now = () => deps.clock();
  const activeStudent = async (studentId: string): Promise<E.Either<ApiError, StudentDoc>> => {
    const s = await deps.students.get(studentId);
    if (s === undefined) return E.left(apiError('NOT_FOUND', 'No such student.'));
    if (s.status === 'DELETED')
      return E.left(apiError('CONFLICT', 'The student is deleted.', { reason: 'STUDENT_DELETED' }));
    return E.right(s);
  };
  const event = (actor: Actor, type: string, studentId: string, payload: Record<string, unknown>) =>
    deps.events.append({
      eventId: randomUUID(),
      type,
      subjectType: 'STUDENT',
      subjectId: studentId,
      payload,
      actor: { userId: actor.principal.userId, role: actor.principal.primaryRole },
      deviceId: actor.deviceId,
      clientTimestamp: now().toISOString(),
      serverTimestamp: now().toISOString(),
    });

  const service: PickupService = {
    async list(studentId) {
      const student = await deps.students.get(studentId);
      if (student === undefined) return E.left(apiError('NOT_FOUND', 'No such student.'));
      return E.right([...n1Entries(student), ...(await deps.pickups.entriesOf(studentId)).map(entryView)]);
    },

    async addAdult(actor, studentId, body) {
      const student = await activeStudent(studentId);
      if (E.isLeft(student)) return student;
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      const pickupId = randomUUID();
      const entry = await deps.pickups.createEntry({
        pickupId,
        studentId,
        name: body.name,
        relationship: body.relationship,
        phone: body.phone,
        status: 'PENDING_VERIFICATION',
        otpHash: otpHash(pickupId, code),
        otpExpiresAt: new Date(now().getTime() + OTP_TTL_MS).toISOString(),
        otpAttempts: 0,
        createdBy: actor.principal.userId,
        createdAt: now().toISOString(),
        verifiedAt: null,
      });
      // Not awaited, and outside the request's deadline: the answer never depended on the gateway (a
      // code it did not take stays pending in the delivery log), so its retries need not hold the
      // request up against its deadline (decision 0046). `sendCode` never rejects; should a notifier
      // break that, the code stays unsent, like one the gateway refused.
      void detached(() => deps.notifier.sendCode(body.phone, code, 'pickup-verification')).catch(
        () => undefined,
      );
      await event(actor, 'PICKUP_ADULT_ADDED', studentId, { pickupId, level: 'N2' });
      return E.right(entryView(entry));
    },

    async verify(actor, studentId, pickupId, code) {
      for (let attempt = 0; attempt < 5; attempt += 1) {
        const entry = await deps.pickups.getEntry(pickupId);
        if (entry === undefined || entry.studentId !== studentId)
          return E.left(apiError('NOT_FOUND', 'No such pickup entry.'));
        if (entry.status !== 'PENDING_VERIFICATION')
          return E.left(
            apiError('CONFLICT', 'This entry is not waiting for verification.', { reason: entry.status }),
          );
        const expired = entry.otpExpiresAt === null || Date.parse(entry.otpExpiresAt) <= now().getTime();
        if (expired || entry.otpAttempts >= OTP_MAX_ATTEMPTS) {
          return E.left(
            apiError('CONFLICT', 'The code expired or too many tries were made; add the adult again.', {
              reason: 'CODE_EXPIRED',
            }),
          );
        }
        const matches =
          entry.otpHash !== null &&
          equalBytes(
            new TextEncoder().encode(otpHash(pickupId, code.trim())),
            new TextEncoder().encode(entry.otpHash),
          );
        const { _id: _i, _rev: _r, docType: _d, ...fields } = entry;
        const next = matches
          ? {
              ...fields,
              status: 'ACTIVE' as const,
              otpHash: null,
              otpExpiresAt: null,
              verifiedAt: now().toISOString(),
            }
          : { ...fields, otpAttempts: entry.otpAttempts + 1 };
        const updated = await deps.pickups.updateEntry(entry, next);
        if (updated === 'CONFLICT') continue;
        if (!matches) {
          return E.left(
            apiError('VALIDATION_FAILED', 'The code does not match.', {
              issues: [{ path: 'body.code', message: 'does not match' }],
              remainingAttempts: OTP_MAX_ATTEMPTS - updated.otpAttempts,
            }),
          );
        }
        await event(actor, 'PICKUP_ADULT_VERIFIED', studentId, { pickupId, level: 'N2' });
        return E.right(entryView(updated));
      }
      return E.left(apiError('CONFLICT', 'The entry changed while this request ran; try again.'));
    },

    async grants(studentId) {
      if ((await deps.students.get(studentId)) === undefined)
        return E.left(apiError('NOT_FOUND', 'No such student.'));
      return E.right(await deps.pickups.grantsOf(studentId));
    },

    async createGrant(actor, studentId, body) {
      const student = await activeStudent(studentId);
      if (E.isLeft(student)) return student;
      const listed = await service.list(studentId);
      const entries = E.isRight(listed) ? listed.right : [];
      const by = entries.find((e) => e.pickupId === body.authorized_by_pickup_id && e.status === 'ACTIVE');
      if (by === undefined) {
        return E.left(
          apiError(
            'VALIDATION_FAILED',
            "authorized_by_pickup_id must be an ACTIVE entry of this child's pickup list.",
            {
              issues: [
                { path: 'body.authorized_by_pickup_id', message: 'not an active entry of this child' },
              ],
            },
          ),
        );
      }
      const window = grantWindow(
        now(),
        body.valid_from === undefined ? undefined : new Date(body.valid_from),
        body.valid_until === undefined ? undefined : new Date(body.valid_until),
      );
      if (!window.ok) {
        return E.left(
          apiError('VALIDATION_FAILED', `Invalid window: ${window.reason}.`, {
            issues: [{ path: 'body.valid_until', message: window.reason }],
          }),
        );
      }
      const grant = await deps.pickups.createGrant({
        authorizationId: randomUUID(),
        studentId,
        authorized_by_pickup_id: by.pickupId,
        authorized_by: by.name,
        created_by: actor.principal.userId,
        relationship: body.relationship,
        adultName: body.adultName,
        phone: body.phone ?? null,
        valid_from: window.validFrom.toISOString(),
        valid_until: window.validUntil.toISOString(),
        createdAt: now().toISOString(),
        revokedAt: null,
        revokedBy: null,
        revocationJustification: null,
      });
      await event(actor, 'AUTHORIZED_PICKUP', studentId, {
        action: 'GRANTED',
        authorizationId: grant.authorizationId,
        valid_until: grant.valid_until,
      });
      return E.right(grant);
    },

    async revokeGrant(actor, authorizationId, justification) {
      for (let attempt = 0; attempt < 5; attempt += 1) {
        const grant = await deps.pickups.getGrant(authorizationId);
        if (grant === undefined) return E.left(apiError('NOT_FOUND', 'No such pickup authorization.'));
        if (grant.revokedAt !== null)
          return E.left(apiError('CONFLICT', 'Already revoked.', { reason: 'ALREADY_REVOKED' }));
        const { _id: _i, _rev: _r, docType: _d, ...fields } = grant;
        const updated = await deps.pickups.updateGrant(grant, {
          ...fields,
          revokedAt: now().toISOString(),
          revokedBy: actor.principal.userId,
          revocationJustification: justification,
        });
        if (updated === 'CONFLICT') continue;
        await event(actor, 'AUTHORIZED_PICKUP', grant.studentId, {
          action: 'REVOKED',
          authorizationId,
          justification,
        });
        return E.right(updated);
      }
      return E.left(apiError('CONFLICT', 'The authorization changed while this request ran; try again.'));
    },

    async allowedAdults(student) {
      return adultsFor(
        student,
        await deps.pickups.entriesOf(student.studentId),
        await deps.pickups.grantsOf(student.studentId),
        now(),
      );
    },

    async allowedAdultsOfAll(students) {
      const group = <D extends { readonly studentId: string }>(docs: ReadonlyArray<D>) => {
        const by = new Map<string, D[]>();
        for (const d of docs) by.set(d.studentId, [...(by.get(d.studentId) ?? []), d]);
        return by;
      };
      const entries = group(await deps.pickups.allEntries());
      const grants = group(await deps.pickups.allGrants());
      const at = now();
      return new Map(
        students.map((s) => [
          s.studentId,
          adultsFor(s, entries.get(s.studentId) ?? [], grants.get(s.studentId) ?? [], at),
        ]),
      );
    },
  };
  return service;
};
