/** Weekly schedules (decision 0031): the list, a new one, and ending one. */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { WEEKDAYS, type Weekday } from '../../../domain/schedules.js';
import { field, h, replaceChildren } from '../../../kiosk/app/dom.js';
import { apiCall, errorMessage } from '../api.js';
import { dateField, dateInput } from '../dateInput.js';
import { localDay } from '../dates.js';
import type { Shell } from '../shell.js';
import { labelled } from './children.js';

const Classes = t.type({
  items: t.array(
    t.intersection([t.type({ classId: t.string, name: t.string }), t.partial({ status: t.string })]),
  ),
});
const Schedules = t.type({
  items: t.array(
    t.type({
      scheduleId: t.string,
      classId: t.string,
      weekdays: t.array(t.string),
      localTime: t.string,
      title: t.union([t.string, t.null]),
      from: t.string,
      status: t.string,
    }),
  ),
});

const isWeekday = (s: string): s is Weekday => WEEKDAYS.some((w) => w === s);

export const schedulesPage = (shell: Shell): void => {
  const { t: tr } = shell;
  const list = h('tbody');
  const classSelect = h('select', { attrs: { required: '' } });
  const time = h('input', { attrs: { type: 'time', required: '', value: '09:00' } });
  const from = dateInput(localDay(new Date()), { required: '' });
  const title = h('input', { attrs: { type: 'text' } });
  const days = WEEKDAYS.map((d) => ({ d, box: h('input', { attrs: { type: 'checkbox', value: d } }) }));
  const classNames = new Map<string, string>();

  const failed = (a: { status: number; json: unknown }) =>
    shell.say(
      a.status === 0 ? tr('error.network') : tr('error.generic', { message: errorMessage(a) }),
      'error',
    );

  const load = async () => {
    const a = await apiCall('GET', '/api/v1/schedules');
    const s = Schedules.decode(a.json);
    if (E.isLeft(s)) return failed(a);
    replaceChildren(
      list,
      ...(s.right.items.length === 0
        ? [h('tr', {}, h('td', { attrs: { colspan: '5' } }, tr('schedules.none')))]
        : s.right.items.map((x) =>
            h(
              'tr',
              {},
              h('td', {}, classNames.get(x.classId) ?? x.classId),
              h('td', {}, x.weekdays.map((d) => (isWeekday(d) ? tr(`day.${d}`) : d)).join(', ')),
              h('td', {}, x.localTime),
              h('td', {}, x.title ?? ''),
              h(
                'td',
                {},
                x.status === 'ENDED'
                  ? tr('schedules.ended')
                  : h(
                      'button',
                      {
                        attrs: { type: 'button' },
                        onClick: () =>
                          void apiCall('POST', `/api/v1/schedules/${x.scheduleId}/end`, {}).then((r) =>
                            r.status === 200 ? load() : failed(r),
                          ),
                      },
                      tr('schedules.end'),
                    ),
              ),
            ),
          )),
    );
  };

  const form = h(
    'form',
    {
      onSubmit: (e) => {
        e.preventDefault();
        void (async () => {
          const body = {
            classId: classSelect.value,
            weekdays: days.filter((x) => x.box.checked).map((x) => x.d),
            localTime: time.value,
            from: from.iso(),
            ...(title.value.trim() === '' ? {} : { title: title.value.trim() }),
          };
          const a = await apiCall('POST', '/api/v1/schedules', body);
          if (a.status !== 201) return failed(a);
          shell.say(tr('schedules.created'));
          await load();
        })();
      },
    },
    h('h2', {}, tr('schedules.new')),
    labelled(tr('schedules.class'), classSelect),
    h(
      'fieldset',
      { className: 'days' },
      h('legend', {}, tr('schedules.weekdays')),
      ...days.map((x) => h('label', { className: 'check' }, x.box, ' ', tr(`day.${x.d}`))),
    ),
    field(tr('schedules.time'), time),
    dateField(tr('schedules.from'), from),
    field(tr('schedules.titleField'), title),
    h('button', { attrs: { type: 'submit' } }, tr('schedules.create')),
  );
  replaceChildren(
    shell.main,
    h('h1', {}, tr('schedules.title')),
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...[
            tr('schedules.class'),
            tr('schedules.weekdays'),
            tr('schedules.time'),
            tr('schedules.titleField'),
            '',
          ].map((c) => h('th', { attrs: { scope: 'col' } }, c)),
        ),
      ),
      list,
    ),
    form,
  );
  void (async () => {
    // Every schedule's class is named, a deactivated one too (0047); a new schedule is offered the
    // active classes only, as the server takes no other.
    const c = Classes.decode((await apiCall('GET', '/api/v1/classes?includeInactive=true')).json);
    if (E.isRight(c)) {
      for (const x of c.right.items) classNames.set(x.classId, x.name);
      replaceChildren(
        classSelect,
        ...c.right.items
          .filter((x) => x.status !== 'DEACTIVATED')
          .map((x) => h('option', { attrs: { value: x.classId } }, x.name)),
      );
    }
    await load();
  })();
};
