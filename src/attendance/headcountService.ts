/**
 * A session's headcount for the desk and the admins (`GET /api/v1/sessions/{sessionId}/headcount`):
 * children in the room and gone, from the check-in aspects the pipeline projected, beside the class's
 * capacity, the volunteers in the room (and those its ratio asks for).
 */
import * as E from 'fp-ts/lib/Either.js';
import { type ApiError, apiError } from '../domain/errors.js';
import { headcountOf, volunteersNeeded } from '../rules/checkin.js';
import type { ClassStore } from '../store/classes.js';
import type { ProjectionStore } from '../store/projections.js';
import type { VolunteerService } from './volunteerService.js';

export interface SessionHeadcount {
  readonly sessionId: string;
  readonly checkedIn: number;
  readonly checkedOut: number;
  readonly capacity: number | null;
  readonly volunteers: number;
  readonly childrenPerVolunteer: number | null;
  readonly volunteersNeeded: number | null;
}

export interface HeadcountService {
  of(sessionId: string): Promise<E.Either<ApiError, SessionHeadcount>>;
}

export const headcountService = (deps: {
  readonly classes: ClassStore;
  readonly projections: Pick<ProjectionStore, 'projectPrefix'>;
  readonly volunteers: Pick<VolunteerService, 'inRoom'>;
}): HeadcountService => ({
  async of(sessionId) {
    const session = await deps.classes.getSession(sessionId);
    if (session === undefined) return E.left(apiError('NOT_FOUND', 'No such session.'));
    const cls = await deps.classes.getClass(session.classId);
    const aspects = await deps.projections.projectPrefix(`checkin:${sessionId}:`);
    const counted = headcountOf(
      aspects.flatMap((p) => (p.state?.kind === 'checkin' ? [p.state.checkins] : [])),
    );
    const childrenPerVolunteer = cls?.childrenPerVolunteer ?? null;
    return E.right({
      sessionId,
      ...counted,
      capacity: cls?.capacity ?? null,
      volunteers: await deps.volunteers.inRoom(sessionId),
      childrenPerVolunteer,
      volunteersNeeded: volunteersNeeded(counted.checkedIn, childrenPerVolunteer),
    });
  },
});
