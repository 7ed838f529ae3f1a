/**
 * Image consents: record (with the term text frozen), read with history, revoke once. Recording one for
 * a student links it from the student (`imageConsentId`) and lets photos be stored and served; revoking
 * it stops photos being served at once.
 */
import { randomUUID } from 'node:crypto';
import * as E from 'fp-ts/lib/Either.js';
import type { ConsentDoc, CreateConsentBody, SubjectType } from '../domain/consent.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { Actor } from '../domain/principal.js';
import type { ConsentStore } from '../store/consents.js';
import type { EventStore } from '../store/events.js';
import { type StudentStore, toRecord } from '../store/students.js';
import type { UserStore } from '../store/users.js';
import type { DirectoryPort } from '../sync/directoryPort.js';

export interface ConsentServiceDeps {
  readonly consents: ConsentStore;
  readonly students: StudentStore;
  readonly users: UserStore;
  readonly directory: DirectoryPort;
  readonly events: EventStore;
  readonly clock: () => Date;
  /**
   * Told when a revocation leaves a student without an active consent: the photo goes (0033). A photo
   * is processed only under a consent, and keeping it stored is processing.
   */
  readonly onNoActiveConsent?: (actor: Actor, studentId: string) => Promise<void>;
}

export interface ConsentService {
  record(actor: Actor, body: CreateConsentBody): Promise<E.Either<ApiError, ConsentDoc>>;
  history(
    subjectType: SubjectType,
    subjectId: string,
  ): Promise<{ current: ConsentDoc | null; history: ConsentDoc[] }>;
  revoke(actor: Actor, consentId: string, reason: string): Promise<E.Either<ApiError, ConsentDoc>>;
}

export const consentService = (deps: ConsentServiceDeps): ConsentService => {
  const now = () => deps.clock().toISOString();
  const event = (actor: Actor, type: string, consent: ConsentDoc) =>
    deps.events.append({
      eventId: randomUUID(),
      type,
      subjectType: consent.subject_type,
      subjectId: consent.subject_id,
      payload: { consentId: consent.consentId, term_version: consent.term_version, purpose: consent.purpose },
      actor: { userId: actor.principal.userId, role: actor.principal.primaryRole },
      deviceId: actor.deviceId,
      clientTimestamp: now(),
      serverTimestamp: now(),
    });

  const linkFromStudent = async (studentId: string, consentId: string) => {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const student = await deps.students.get(studentId);
      if (student === undefined) return;
      const updated = await deps.students.update(student, {
        ...toRecord(student),
        imageConsentId: consentId,
        updatedAt: now(),
      });
      if (updated !== 'CONFLICT') {
        deps.directory.upsertStudent(updated);
        return;
      }
    }
  };

  return {
    async record(actor, body) {
      const subjectExists =
        body.subject_type === 'STUDENT'
          ? (await deps.students.get(body.subject_id))?.status === 'ACTIVE'
          : (await deps.users.get(body.subject_id)) !== undefined;
      if (!subjectExists) {
        return E.left(
          apiError('VALIDATION_FAILED', 'No active subject with this id.', {
            issues: [
              {
                path: 'body.subject_id',
                message: `no active ${body.subject_type.toLowerCase()} with this id`,
              },
            ],
          }),
        );
      }
      const created = await deps.consents.create({
        consentId: randomUUID(),
        subject_type: body.subject_type,
        subject_id: body.subject_id,
        term_version: body.term_version,
        purpose: body.purpose,
        term_text: body.term_text,
        granted_by_name: body.granted_by_name,
        granted_by_user_id: body.granted_by_user_id ?? null,
        relationship: body.relationship,
        verification_method: body.verification_method,
        verified_by_user_id: actor.principal.userId,
        granted_at: now(),
        revoked_at: null,
        revoked_by_user_id: null,
        revocation_reason: null,
      });
      deps.directory.upsertConsent(created);
      if (created.subject_type === 'STUDENT') await linkFromStudent(created.subject_id, created.consentId);
      await event(actor, 'IMAGE_CONSENT_GRANTED', created);
      return E.right(created);
    },

    async history(subjectType, subjectId) {
      const history = await deps.consents.listForSubject(subjectType, subjectId);
      return { current: history.find((c) => c.revoked_at === null) ?? null, history };
    },

    async revoke(actor, consentId, reason) {
      const current = await deps.consents.get(consentId);
      if (current === undefined) return E.left(apiError('NOT_FOUND', 'No such consent.'));
      const revoked = await deps.consents.revoke(current, actor.principal.userId, reason, now());
      if (revoked === 'ALREADY_REVOKED') {
        return E.left(
          apiError('CONFLICT', 'This consent is already revoked; a new consent is a new record.', {
            reason: 'ALREADY_REVOKED',
          }),
        );
      }
      deps.directory.upsertConsent(revoked);
      await event(actor, 'IMAGE_CONSENT_REVOKED', revoked);
      if (
        revoked.subject_type === 'STUDENT' &&
        deps.onNoActiveConsent !== undefined &&
        (await deps.consents.listForSubject('STUDENT', revoked.subject_id)).every(
          (c) => c.revoked_at !== null,
        )
      )
        await deps.onNoActiveConsent(actor, revoked.subject_id);
      return E.right(revoked);
    },
  };
};
