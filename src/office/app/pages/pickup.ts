/**
 * Who may collect a child, on the child's page: the list (N1 from the record, N2 adults confirmed by a
 * one-time code sent to their phone) and the temporary N3 grants with their window. The server keeps
 * every rule (code tries and expiry, who may grant, the 7-day window); this only asks and shows.
 */
import * as E from 'fp-ts/lib/Either.js';
import { type DateInput, dateField, dateInput } from '../../../client/dateInput.js';
import { field, h, replaceChildren } from '../../../client/dom.js';
import { type Failure, statusOf } from '../../../client/transport.js';
import { onAnswer, sayFailure } from '../calls.js';
import { api } from '../client.js';
import type { Shell } from '../shell.js';
import { adminWords, row, table, when } from './adminKit.js';
import type { AdminKey, AdminT } from './adminText.js';
import { labelled } from './children.js';

const statusKey = (s: string): AdminKey | undefined =>
  s === 'ACTIVE' || s === 'PENDING_VERIFICATION' || s === 'REVOKED' ? `pickup.status.${s}` : undefined;

/**
 * A day and a time on the office's clock as an instant, or nothing when the day is left empty; a
 * time left empty is `otherwise` (the start of the first day, the end of the last).
 */
const instant = (day: DateInput, time: HTMLInputElement, otherwise: string): string | undefined => {
  const iso = day.iso();
  return iso === null || iso === undefined
    ? undefined
    : new Date(`${iso}T${time.value === '' ? otherwise : time.value}`).toISOString();
};

export const pickupSection = async (
  shell: Shell,
  at: AdminT,
  into: HTMLElement,
  studentId: string,
): Promise<void> => {
  const params = { studentId };
  const list = h('div');
  const grants = h('div');
  const bySelect = h('select', { attrs: { required: '' } });
  const reload = () => pickupSection(shell, at, into, studentId);

  const entries = await api.listPickupAdults({ params });
  if (E.isLeft(entries))
    return statusOf(entries.left) === 403
      ? replaceChildren(into, h('p', {}, at('common.forbidden')))
      : sayFailure(shell, entries.left, adminWords(at));
  /** A one-field form in a table row: posts the field's value, then says so and reads the section again. */
  const rowAction = (
    input: HTMLInputElement,
    labels: { readonly field: string; readonly button: string; readonly done: string },
    post: (value: string) => Promise<E.Either<Failure, unknown>>,
  ) =>
    h(
      'form',
      {
        className: 'inline',
        onSubmit: (e) => {
          e.preventDefault();
          void onAnswer(
            shell,
            post(input.value.trim()),
            async () => {
              shell.say(labels.done);
              await reload();
            },
            adminWords(at),
          );
        },
      },
      field(labels.field, input),
      h('button', { attrs: { type: 'submit' } }, labels.button),
    );
  const codeFor = (pickupId: string) =>
    rowAction(
      h('input', { attrs: { inputmode: 'numeric', autocomplete: 'one-time-code', required: '' } }),
      { field: at('pickup.code'), button: at('pickup.verify'), done: at('pickup.verified') },
      (code) => api.verifyPickupAdult({ params: { studentId, pickupId }, body: { code } }),
    );
  replaceChildren(
    list,
    table(
      [at('col.level'), at('col.name'), at('col.relationship'), at('col.phone'), at('col.status')],
      entries.right.items.map((p) => {
        const key = statusKey(p.status);
        return row(
          p.level,
          p.name,
          p.relationship,
          p.phoneSuffix === null ? '' : `…${p.phoneSuffix}`,
          p.status === 'PENDING_VERIFICATION' ? codeFor(p.pickupId) : key === undefined ? p.status : at(key),
        );
      }),
      at('pickup.none'),
      'pickup-list',
    ),
  );
  for (const p of entries.right.items)
    if (p.status === 'ACTIVE')
      bySelect.append(h('option', { attrs: { value: p.pickupId } }, `${p.name} (${p.level})`));

  // Without the grants the list above still stands; the table then shows none.
  const decoded = await api.listGrants({ params });
  const revokeFor = (authorizationId: string) =>
    rowAction(
      h('input', { attrs: { required: '', minlength: '10', maxlength: '500' } }),
      { field: at('grant.revokeReason'), button: at('grant.revoke'), done: at('grant.revoked') },
      (justification) => api.revokeGrant({ params: { authorizationId }, body: { justification } }),
    );
  replaceChildren(
    grants,
    table(
      [at('grant.adult'), at('col.relationship'), at('col.window'), at('col.status')],
      (E.isRight(decoded) ? decoded.right.items : []).map((x) =>
        row(
          x.adultName,
          x.relationship,
          `${when(x.valid_from)} – ${when(x.valid_until)}`,
          x.active
            ? h('span', {}, at('grant.active'), ' ', revokeFor(x.authorizationId))
            : at('grant.inactive'),
        ),
      ),
      at('grant.none'),
      'pickup-grants',
    ),
  );

  const adult = {
    name: h('input', { attrs: { required: '' } }),
    rel: h('input', { attrs: { required: '' } }),
    phone: h('input', { attrs: { type: 'tel', required: '' } }),
  };
  const addAdult = h(
    'form',
    {
      onSubmit: (e) => {
        e.preventDefault();
        void onAnswer(
          shell,
          api.addPickupAdult({
            params,
            body: {
              name: adult.name.value.trim(),
              relationship: adult.rel.value.trim(),
              phone: adult.phone.value.trim(),
            },
          }),
          async () => {
            await reload();
            shell.say(at('pickup.added'));
          },
          adminWords(at),
        );
      },
    },
    h('h3', {}, at('pickup.addAdult')),
    field(at('pickup.name'), adult.name),
    field(at('pickup.relationship'), adult.rel),
    field(at('pickup.phone'), adult.phone),
    h('button', { attrs: { type: 'submit' } }, at('pickup.add')),
  );
  const grant = {
    name: h('input', { attrs: { required: '' } }),
    rel: h('input', { attrs: { required: '' } }),
    phone: h('input', { attrs: { type: 'tel' } }),
    from: dateInput(),
    fromTime: h('input', { attrs: { type: 'time' } }),
    until: dateInput(),
    untilTime: h('input', { attrs: { type: 'time' } }),
  };
  const addGrant = h(
    'form',
    {
      attrs: { 'data-test': 'grant-form' },
      onSubmit: (e) => {
        e.preventDefault();
        const from = instant(grant.from, grant.fromTime, '00:00');
        const until = instant(grant.until, grant.untilTime, '23:59:59.999');
        const phone = grant.phone.value.trim();
        void onAnswer(
          shell,
          api.createGrant({
            params,
            body: {
              authorized_by_pickup_id: bySelect.value,
              adultName: grant.name.value.trim(),
              relationship: grant.rel.value.trim(),
              ...(phone === '' ? {} : { phone }),
              ...(from === undefined ? {} : { valid_from: from }),
              ...(until === undefined ? {} : { valid_until: until }),
            },
          }),
          async () => {
            await reload();
            shell.say(at('grant.created'));
          },
          adminWords(at),
        );
      },
    },
    h('h3', {}, at('grant.new')),
    labelled(at('grant.by'), bySelect),
    field(at('grant.adult'), grant.name),
    field(at('pickup.relationship'), grant.rel),
    field(at('pickup.phone'), grant.phone),
    h('p', { className: 'hint' }, at('grant.defaultWindow')),
    dateField(at('grant.from'), grant.from),
    field(at('grant.fromTime'), grant.fromTime),
    dateField(at('grant.until'), grant.until),
    field(at('grant.untilTime'), grant.untilTime),
    h('button', { attrs: { type: 'submit' } }, at('grant.create')),
  );
  replaceChildren(
    into,
    h('p', { className: 'hint' }, at('pickup.help')),
    list,
    addAdult,
    h('h3', {}, at('grant.title')),
    grants,
    addGrant,
  );
};
