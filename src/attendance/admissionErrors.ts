/** The admission rule's refusals as the contract answers them (decision 0042). */
import { type ApiError, apiError } from '../domain/errors.js';
import type { AdmissionDecision } from '../rules/admission.js';

export const notFound = (what: string): ApiError => apiError('NOT_FOUND', `No such ${what}.`);

/** The codes clients already meet for refusals of fact, and one code of its own for each policy refusal. */
export const refusalError = (decision: Extract<AdmissionDecision, { kind: 'REFUSE' }>): ApiError => {
  const { refusal } = decision;
  switch (refusal.reason) {
    case 'SESSION_NOT_FOUND':
      return notFound('session');
    case 'STUDENT_NOT_FOUND':
      return notFound('student');
    case 'CLASS_DEACTIVATED':
      return apiError('CONFLICT', "The session's class is deactivated: it takes no check-ins.", {
        reason: 'CLASS_DEACTIVATED',
      });
    case 'SESSION_DEACTIVATED':
      return apiError('CONFLICT', 'The session is deactivated: it takes no check-ins.', {
        reason: 'SESSION_DEACTIVATED',
      });
    case 'STUDENT_DELETED':
      return apiError('CONFLICT', 'The student is deleted.', { reason: 'STUDENT_DELETED' });
    case 'ALREADY_CHECKED_IN':
      return apiError('CONFLICT', 'The child is already checked in to this session.', {
        reason: 'ALREADY_CHECKED_IN',
      });
    default: {
      const { reason, ...facts } = refusal;
      const overridable = 'overridable' in decision && decision.overridable;
      return apiError(reason, undefined, { ...facts, overridable });
    }
  }
};
