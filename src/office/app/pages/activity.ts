/**
 * What the classes page says of a nucleus's, class's or session's status (0047): the label of its
 * state, the action it offers, and a refused change in the office's own words. Pure, no DOM.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import type { AdminKey, AdminT } from './adminText.js';

/** An item of a list read with `includeInactive=true`; a server from before 0047 sends no status. */
export const isDeactivated = (item: { readonly status?: string | undefined }): boolean =>
  item.status === 'DEACTIVATED';

export const statusLabel = (at: AdminT, item: { readonly status?: string | undefined }): string =>
  at(isDeactivated(item) ? 'classes.inactive' : 'classes.active');

/** The change a row offers, with the path it is posted to. */
export const statusAction = (
  at: AdminT,
  base: string,
  item: { readonly status?: string | undefined },
): { readonly label: string; readonly path: string; readonly done: string } =>
  isDeactivated(item)
    ? { label: at('classes.reactivate'), path: `${base}/reactivate`, done: at('classes.reactivated') }
    : { label: at('classes.deactivate'), path: `${base}/deactivate`, done: at('classes.deactivated') };

const Refusal = t.type({
  error: t.type({
    details: t.intersection([t.type({ reason: t.string }), t.partial({ classIds: t.array(t.string) })]),
  }),
});

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
  answer: { readonly status: number; readonly json: unknown },
  classNames: ReadonlyMap<string, string>,
): string | undefined => {
  if (answer.status !== 409) return undefined;
  const refusal = Refusal.decode(answer.json);
  if (E.isLeft(refusal)) return undefined;
  const { reason, classIds = [] } = refusal.right.error.details;
  const key = REASONS.find((k) => k === `classes.${reason}`);
  if (key === undefined) return undefined;
  return at(key, { classes: classIds.map((id) => classNames.get(id) ?? id).join(', ') });
};
