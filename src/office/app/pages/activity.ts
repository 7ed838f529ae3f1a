/**
 * What the classes page says of a nucleus's, class's or session's status (0047): the label of its
 * state, the action it offers, and a refused change in the office's own words. Pure, no DOM.
 */
import { detailsOf, type Failure, statusOf } from '../../../client/transport.js';
import { ActivityRefusalDetails } from '../../../domain/classes.js';
import type { AdminKey, AdminT } from './adminText.js';

/** An item of a list read with `includeInactive=true`; a server from before 0047 sends no status. */
export const isDeactivated = (item: { readonly status?: string | undefined }): boolean =>
  item.status === 'DEACTIVATED';

export const statusLabel = (at: AdminT, item: { readonly status?: string | undefined }): string =>
  at(isDeactivated(item) ? 'classes.inactive' : 'classes.active');

/** The change a row offers: which, its button's label, and what is said once it is made. */
export const statusAction = (
  at: AdminT,
  item: { readonly status?: string | undefined },
): { readonly change: 'deactivate' | 'reactivate'; readonly label: string; readonly done: string } =>
  isDeactivated(item)
    ? { change: 'reactivate', label: at('classes.reactivate'), done: at('classes.reactivated') }
    : { change: 'deactivate', label: at('classes.deactivate'), done: at('classes.deactivated') };

const REASONS: ReadonlyArray<AdminKey> = [
  'classes.NUCLEUS_HAS_ACTIVE_CLASSES',
  'classes.NUCLEUS_DEACTIVATED',
  'classes.CLASS_DEACTIVATED',
  'classes.ALREADY_DEACTIVATED',
  'classes.ALREADY_ACTIVE',
];

/**
 * A refused status change, or an item refused under a deactivated parent, in words, naming the
 * active classes that keep a nucleus from being deactivated; undefined for any other answer (the
 * page then says what the server said).
 */
export const refusalText = (
  at: AdminT,
  failure: Failure,
  classNames: ReadonlyMap<string, string>,
): string | undefined => {
  if (statusOf(failure) !== 409) return undefined;
  const details = detailsOf(failure, ActivityRefusalDetails);
  if (details === undefined) return undefined;
  const { reason, classIds = [] } = details;
  const key = REASONS.find((k) => k === `classes.${reason}`);
  if (key === undefined) return undefined;
  return at(key, { classes: classIds.map((id) => classNames.get(id) ?? id).join(', ') });
};
