/**
 * Nuclei, classes and one-off sessions (ADMIN, CADASTRO or a role with `sessions.add`/`sessions.edit`;
 * the server decides): create and edit each in place. Weekly sessions come from the schedules page;
 * a class, nucleus or session is not deactivated here (decision 0036).
 */
import * as E from 'fp-ts/lib/Either.js';
import { dateField, dateInput, pageLang } from '../../../client/dateInput.js';
import { dateFormat } from '../../../client/dates.js';
import { h, replaceChildren } from '../../../client/dom.js';
import type { Failure } from '../../../client/transport.js';
import { onAnswer } from '../calls.js';
import { api } from '../client.js';
import type { Shell } from '../shell.js';
import { adminWords, row, section, table } from './adminKit.js';
import { type AdminT, adminTranslator } from './adminText.js';
import { labelled } from './children.js';

/** An input with an accessible name of its own: in a table row there is no visible label to wrap it. */
const cellInput = (name: string, value: string, attrs: Readonly<Record<string, string>> = {}) => {
  // The stored value as the `value` attribute (the field's default): a reset shows it again.
  return h('input', { attrs: { 'aria-label': name, value, ...attrs } });
};

export const classesPage = (shell: Shell): void => {
  const at = adminTranslator();
  const nuclei = h('div', { attrs: { 'data-test': 'nuclei' } });
  const classes = h('div', { attrs: { 'data-test': 'classes' } });
  const sessions = h('div', { attrs: { 'data-test': 'sessions' } });
  const sessionClass = h('select');
  const send = (call: Promise<E.Either<Failure, unknown>>, said: string) =>
    onAnswer(shell, call, () => shell.say(said), adminWords(at));

  const load = async () => {
    const n = await api.listNuclei();
    const c = await api.listClasses();
    if (E.isLeft(n) || E.isLeft(c)) return shell.say(shell.t('error.network'), 'error');
    const nucleusOptions = (selected: string | null) => {
      const select = h('select', { attrs: { 'aria-label': at('classes.nucleus') } });
      select.append(h('option', { attrs: { value: '' } }, at('classes.noNucleus')));
      for (const x of n.right.items) select.append(h('option', { attrs: { value: x.nucleusId } }, x.name));
      select.value = selected ?? '';
      return select;
    };
    replaceChildren(
      nuclei,
      table(
        [at('classes.name'), at('col.actions')],
        n.right.items.map((x) => {
          const name = cellInput(at('classes.name'), x.name, { required: '', maxlength: '120' });
          return row(
            name,
            h(
              'button',
              {
                attrs: { type: 'button' },
                onClick: () =>
                  void send(
                    api.updateNucleus({
                      params: { nucleusId: x.nucleusId },
                      body: { name: name.value.trim() },
                    }),
                    at('classes.saved'),
                  ),
              },
              at('classes.save'),
            ),
          );
        }),
        at('classes.none'),
      ),
    );
    replaceChildren(
      classes,
      table(
        [at('classes.name'), at('classes.nucleus'), at('classes.capacity'), at('col.actions')],
        c.right.items.map((x) => {
          const name = cellInput(at('classes.name'), x.name, { required: '', maxlength: '120' });
          const nucleus = nucleusOptions(x.nucleusId);
          const capacity = cellInput(at('classes.capacity'), x.capacity === null ? '' : String(x.capacity), {
            type: 'number',
            min: '1',
            max: '10000',
          });
          return row(
            name,
            nucleus,
            capacity,
            h(
              'button',
              {
                attrs: { type: 'button' },
                onClick: () =>
                  void send(
                    api.updateClass({
                      params: { classId: x.classId },
                      body: {
                        name: name.value.trim(),
                        nucleusId: nucleus.value === '' ? null : nucleus.value,
                        capacity: capacity.value === '' ? null : Number(capacity.value),
                      },
                    }),
                    at('classes.saved'),
                  ),
              },
              at('classes.save'),
            ),
          );
        }),
        at('classes.none'),
      ),
    );
    const chosen = sessionClass.value;
    replaceChildren(
      sessionClass,
      ...c.right.items.map((x) => h('option', { attrs: { value: x.classId } }, x.name)),
    );
    if (chosen !== '') sessionClass.value = chosen;
    await loadSessions();
  };

  // Only the newest read draws: a slower earlier one (another class chosen meanwhile) is dropped.
  let sessionsRead = 0;
  const loadSessions = async () => {
    if (sessionClass.value === '') return replaceChildren(sessions, h('p', {}, at('classes.none')));
    const classId = sessionClass.value;
    sessionsRead += 1;
    const mine = sessionsRead;
    const s = await api.listSessions({ query: { classId } });
    if (mine !== sessionsRead) return;
    if (E.isLeft(s)) return shell.say(shell.t('error.network'), 'error');
    const sorted = [...s.right.items].sort((a, b) => b.date.localeCompare(a.date));
    replaceChildren(
      sessions,
      table(
        [
          `${at('classes.date')} (${dateFormat(pageLang()).hint})`,
          at('classes.sessionTitle'),
          at('col.actions'),
        ],
        sorted.map((x) => {
          const date = dateInput(x.date, { 'aria-label': at('classes.date'), required: '' });
          const title = cellInput(at('classes.sessionTitle'), x.title ?? '', { maxlength: '120' });
          return row(
            date.input,
            title,
            h(
              'button',
              {
                attrs: { type: 'button' },
                onClick: () => {
                  // A button, not a form's submit: the browser reports a date it cannot read only if asked.
                  const day = date.iso();
                  if (day === undefined || day === null) return void date.input.reportValidity();
                  void send(
                    api.updateSession({
                      params: { sessionId: x.sessionId },
                      body: { date: day, title: title.value.trim() === '' ? null : title.value.trim() },
                    }),
                    at('classes.saved'),
                  ).then(async (ok) => (ok ? loadSessions() : undefined));
                },
              },
              at('classes.save'),
            ),
          );
        }),
        at('classes.none'),
        'sessions-table',
      ),
    );
    // Which class the list shows, once drawn (a test waits for it rather than for time).
    sessions.dataset.classId = classId;
  };
  sessionClass.addEventListener('change', () => void loadSessions());
  // The forms that create are drawn once, outside the tables that are drawn again after each change,
  // so what is typed in them survives any redraw.
  const nucleusForm = createForm(at, 'nucleus-form', [at('classes.name')], async ([name]) => {
    const taken = await send(api.createNucleus({ body: { name: name ?? '' } }), at('classes.created'));
    if (taken) await load();
    return taken;
  });
  const classForm = createForm(at, 'class-form', [at('classes.name')], async ([name]) => {
    const taken = await send(api.createClass({ body: { name: name ?? '' } }), at('classes.created'));
    if (taken) await load();
    return taken;
  });
  const sessionForm = createForm(
    at,
    'session-form',
    [at('classes.date'), at('classes.sessionTitle')],
    async ([date, title]) => {
      const body = {
        classId: sessionClass.value,
        date: date ?? '',
        ...(title === '' || title === undefined ? {} : { title }),
      };
      const taken = await send(api.createSession({ body }), at('classes.created'));
      if (taken) await loadSessions();
      return taken;
    },
    [at('classes.date')],
  );

  replaceChildren(
    shell.main,
    h('h1', {}, at('classes.title')),
    section(at('classes.nuclei'), nuclei, nucleusForm),
    section(at('classes.classes'), classes, classForm),
    section(at('classes.sessions'), labelled(at('classes.sessionsOf'), sessionClass), sessions, sessionForm),
  );
  void load();
};

/**
 * A one-line form: labelled inputs (the first required) and a Create button; `done` gets the values
 * and says whether the server took them, and only then is the form emptied.
 */
const createForm = (
  at: AdminT,
  test: string,
  labels: ReadonlyArray<string>,
  done: (values: ReadonlyArray<string>) => Promise<boolean>,
  dates: ReadonlyArray<string> = [],
): HTMLFormElement => {
  // Each field with how to read it: a date is sent as its ISO date (the form refuses one it cannot read).
  const fields = labels.map((l, i) => {
    const attrs: Record<string, string> = i === 0 ? { required: '' } : {};
    if (dates.includes(l)) {
      const date = dateInput(null, attrs);
      return { label: l, element: dateField(l, date), value: () => date.iso() ?? '' };
    }
    const input = h('input', { attrs: { type: 'text', maxlength: '120', ...attrs } });
    return { label: l, element: labelled(l, input), value: () => input.value.trim() };
  });
  const form = h(
    'form',
    {
      className: 'inline',
      attrs: { 'data-test': test },
      onSubmit: (e) => {
        e.preventDefault();
        void done(fields.map((f) => f.value())).then((taken) => {
          if (taken) form.reset();
        });
      },
    },
    ...fields.map((f) => f.element),
    h('button', { attrs: { type: 'submit' } }, at('classes.create')),
  );
  return form;
};
