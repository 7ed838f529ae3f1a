/** Weekly schedules (decision 0031): the list, a new one, and ending one. */
import * as E from 'fp-ts/lib/Either.js';
import { dateField, dateInput } from '../../../client/dateInput.js';
import { localDay } from '../../../client/dates.js';
import { field, h, replaceChildren } from '../../../client/dom.js';
import { WEEKDAYS } from '../../../domain/schedules.js';
import { onAnswer } from '../calls.js';
import { api } from '../client.js';
import type { Shell } from '../shell.js';
import { labelled } from './children.js';

export const schedulesPage = (shell: Shell): void => {
  const { t: tr } = shell;
  const list = h('tbody');
  const classSelect = h('select', { attrs: { required: '' } });
  const time = h('input', { attrs: { type: 'time', required: '', value: '09:00' } });
  const from = dateInput(localDay(new Date()), { required: '' });
  const title = h('input', { attrs: { type: 'text' } });
  const days = WEEKDAYS.map((d) => ({ d, box: h('input', { attrs: { type: 'checkbox', value: d } }) }));
  const classNames = new Map<string, string>();

  const load = () =>
    onAnswer(shell, api.listSchedules(), (schedules) =>
      replaceChildren(
        list,
        ...(schedules.items.length === 0
          ? [h('tr', {}, h('td', { attrs: { colspan: '5' } }, tr('schedules.none')))]
          : schedules.items.map((x) =>
              h(
                'tr',
                {},
                h('td', {}, classNames.get(x.classId) ?? x.classId),
                h('td', {}, x.weekdays.map((d) => tr(`day.${d}`)).join(', ')),
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
                            void onAnswer(
                              shell,
                              api.endSchedule({ params: { scheduleId: x.scheduleId }, body: {} }),
                              load,
                            ),
                        },
                        tr('schedules.end'),
                      ),
                ),
              ),
            )),
      ),
    );

  const form = h(
    'form',
    {
      onSubmit: (e) => {
        e.preventDefault();
        // The form is not submitted while the date is empty or no date (the field's validity).
        const fromDay = from.iso();
        if (fromDay === null || fromDay === undefined) return;
        const body = {
          classId: classSelect.value,
          weekdays: days.filter((x) => x.box.checked).map((x) => x.d),
          localTime: time.value,
          from: fromDay,
          ...(title.value.trim() === '' ? {} : { title: title.value.trim() }),
        };
        void onAnswer(shell, api.createSchedule({ body }), async () => {
          shell.say(tr('schedules.created'));
          await load();
        });
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
    // active classes only, as the server takes no other. Without the classes the schedules still
    // show, by class id.
    const c = await api.listClasses({ query: { includeInactive: 'true' } });
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
