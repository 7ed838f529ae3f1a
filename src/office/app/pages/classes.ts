/**
 * Nuclei, classes and one-off sessions (ADMIN, CADASTRO or a role with `sessions.add`/`sessions.edit`;
 * the server decides): create and edit each in place. Weekly sessions come from the schedules page.
 * Each shows its state; an ADMIN deactivates or reactivates it (0047). Deactivated ones are listed
 * only when asked.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { h, replaceChildren } from '../../../kiosk/app/dom.js';
import { mayReach } from '../../../rules/authorization.js';
import { type Answer, apiCall, currentAuth } from '../api.js';
import { dateField, dateInput, officeLang } from '../dateInput.js';
import { dateFormat } from '../dates.js';
import type { Shell } from '../shell.js';
import { isDeactivated, refusalText, statusAction, statusLabel } from './activity.js';
import { day, row, sayFailure, section, table } from './adminKit.js';
import { type AdminT, adminTranslator } from './adminText.js';
import { labelled } from './children.js';

// A server from before deactivation (0047) sends no status: everything is active.
const Status = t.partial({ status: t.string });
const Nuclei = t.type({
  items: t.array(t.intersection([t.type({ nucleusId: t.string, name: t.string }), Status])),
});
const Classes = t.type({
  items: t.array(
    t.intersection([
      t.type({
        classId: t.string,
        name: t.string,
        nucleusId: t.union([t.string, t.null]),
        capacity: t.union([t.number, t.null]),
      }),
      Status,
    ]),
  ),
});
const Sessions = t.type({
  items: t.array(
    t.intersection([
      t.type({ sessionId: t.string, date: t.string, title: t.union([t.string, t.null]) }),
      Status,
    ]),
  ),
});

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
  // The server decides every call; only an ADMIN is offered what only an ADMIN may do.
  const auth = currentAuth();
  const admin = auth !== undefined && mayReach('admin', auth.user);
  const showInactive = h('input', { attrs: { type: 'checkbox', 'data-test': 'show-inactive' } });
  const listed = () => (showInactive.checked ? '?includeInactive=true' : '');
  /** Class names by id, for the refusals that name classes. */
  const classNames = new Map<string, string>();
  const failed = (a: Answer) => {
    const refused = refusalText(at, a, classNames);
    if (refused === undefined) sayFailure(shell, at, a);
    else shell.say(refused, 'error');
  };
  const send = async (method: string, path: string, body: unknown, ok: number, said: string) => {
    const a = await apiCall(method, path, body);
    if (a.status !== ok) {
      failed(a);
      return false;
    }
    shell.say(said);
    return true;
  };
  /** The state of a row, and for an ADMIN the button that changes it (a deactivation is confirmed). */
  const statusCells = (
    base: string,
    item: { readonly name: string; readonly status?: string },
    reload: () => Promise<void>,
  ) => [
    h('span', { attrs: { 'data-test': 'status' } }, statusLabel(at, item)),
    admin
      ? (() => {
          const action = statusAction(at, base, item);
          return h(
            'button',
            {
              attrs: { type: 'button', 'aria-label': `${action.label}: ${item.name}` },
              onClick: () => {
                if (
                  !isDeactivated(item) &&
                  !window.confirm(at('classes.confirmDeactivate', { name: item.name }))
                )
                  return;
                void send('POST', action.path, {}, 200, action.done).then(async (ok) =>
                  ok ? reload() : undefined,
                );
              },
            },
            action.label,
          );
        })()
      : null,
  ];

  const load = async () => {
    const n = Nuclei.decode((await apiCall('GET', `/api/v1/nuclei${listed()}`)).json);
    const c = Classes.decode((await apiCall('GET', `/api/v1/classes${listed()}`)).json);
    if (E.isLeft(n) || E.isLeft(c)) return shell.say(shell.t('error.network'), 'error');
    for (const x of c.right.items) classNames.set(x.classId, x.name);
    const nucleusOptions = (selected: string | null) => {
      const select = h('select', { attrs: { 'aria-label': at('classes.nucleus') } });
      select.append(h('option', { attrs: { value: '' } }, at('classes.noNucleus')));
      for (const x of n.right.items)
        select.append(
          h(
            'option',
            { attrs: { value: x.nucleusId } },
            isDeactivated(x) ? `${x.name} (${at('classes.inactive')})` : x.name,
          ),
        );
      select.value = selected ?? '';
      return select;
    };
    replaceChildren(
      nuclei,
      table(
        [at('classes.name'), at('classes.status'), at('col.actions')],
        n.right.items.map((x) => {
          const name = cellInput(at('classes.name'), x.name, { required: '', maxlength: '120' });
          const [state, change] = statusCells(`/api/v1/nuclei/${x.nucleusId}`, x, load);
          return row(
            name,
            state,
            // One cell of actions: saving, and for an ADMIN the change of state.
            h(
              'span',
              {},
              h(
                'button',
                {
                  attrs: { type: 'button' },
                  onClick: () =>
                    void send(
                      'PATCH',
                      `/api/v1/nuclei/${x.nucleusId}`,
                      { name: name.value.trim() },
                      200,
                      at('classes.saved'),
                    ),
                },
                at('classes.save'),
              ),
              ' ',
              change,
            ),
          );
        }),
        at('classes.none'),
      ),
    );
    replaceChildren(
      classes,
      table(
        [
          at('classes.name'),
          at('classes.nucleus'),
          at('classes.capacity'),
          at('classes.status'),
          at('col.actions'),
        ],
        c.right.items.map((x) => {
          const name = cellInput(at('classes.name'), x.name, { required: '', maxlength: '120' });
          const nucleus = nucleusOptions(x.nucleusId);
          const capacity = cellInput(at('classes.capacity'), x.capacity === null ? '' : String(x.capacity), {
            type: 'number',
            min: '1',
            max: '10000',
          });
          const [state, change] = statusCells(`/api/v1/classes/${x.classId}`, x, load);
          return row(
            name,
            nucleus,
            capacity,
            state,
            h(
              'span',
              {},
              h(
                'button',
                {
                  attrs: { type: 'button' },
                  onClick: () =>
                    void send(
                      'PATCH',
                      `/api/v1/classes/${x.classId}`,
                      {
                        name: name.value.trim(),
                        nucleusId: nucleus.value === '' ? null : nucleus.value,
                        capacity: capacity.value === '' ? null : Number(capacity.value),
                      },
                      200,
                      at('classes.saved'),
                    ),
                },
                at('classes.save'),
              ),
              ' ',
              change,
            ),
          );
        }),
        at('classes.none'),
      ),
    );
    const chosen = sessionClass.value;
    replaceChildren(
      sessionClass,
      ...c.right.items.map((x) =>
        h(
          'option',
          { attrs: { value: x.classId } },
          isDeactivated(x) ? `${x.name} (${at('classes.inactive')})` : x.name,
        ),
      ),
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
    const inactive = showInactive.checked ? '&includeInactive=true' : '';
    const s = Sessions.decode((await apiCall('GET', `/api/v1/sessions?classId=${classId}${inactive}`)).json);
    if (mine !== sessionsRead) return;
    if (E.isLeft(s)) return shell.say(shell.t('error.network'), 'error');
    const sorted = [...s.right.items].sort((a, b) => b.date.localeCompare(a.date));
    replaceChildren(
      sessions,
      table(
        [
          `${at('classes.date')} (${dateFormat(officeLang()).hint})`,
          at('classes.sessionTitle'),
          at('classes.status'),
          at('col.actions'),
        ],
        sorted.map((x) => {
          const date = dateInput(x.date, { 'aria-label': at('classes.date'), required: '' });
          const title = cellInput(at('classes.sessionTitle'), x.title ?? '', { maxlength: '120' });
          const [state, change] = statusCells(
            `/api/v1/sessions/${x.sessionId}`,
            { ...x, name: x.title === null ? day(x.date) : `${day(x.date)} ${x.title}` },
            loadSessions,
          );
          return row(
            date.input,
            title,
            state,
            h(
              'span',
              {},
              h(
                'button',
                {
                  attrs: { type: 'button' },
                  onClick: () => {
                    // A button, not a form's submit: the browser reports a date it cannot read only if asked.
                    const day = date.iso();
                    if (day === undefined || day === null) return void date.input.reportValidity();
                    void send(
                      'PATCH',
                      `/api/v1/sessions/${x.sessionId}`,
                      { date: day, title: title.value.trim() === '' ? null : title.value.trim() },
                      200,
                      at('classes.saved'),
                    ).then(async (ok) => (ok ? loadSessions() : undefined));
                  },
                },
                at('classes.save'),
              ),
              ' ',
              change,
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
  showInactive.addEventListener('change', () => void load());
  // The forms that create are drawn once, outside the tables that are drawn again after each change,
  // so what is typed in them survives any redraw.
  const nucleusForm = createForm(at, 'nucleus-form', [at('classes.name')], async ([name]) => {
    const taken = await send('POST', '/api/v1/nuclei', { name }, 201, at('classes.created'));
    if (taken) await load();
    return taken;
  });
  const classForm = createForm(at, 'class-form', [at('classes.name')], async ([name]) => {
    const taken = await send('POST', '/api/v1/classes', { name }, 201, at('classes.created'));
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
        date,
        ...(title === '' || title === undefined ? {} : { title }),
      };
      const taken = await send('POST', '/api/v1/sessions', body, 201, at('classes.created'));
      if (taken) await loadSessions();
      return taken;
    },
    [at('classes.date')],
  );

  replaceChildren(
    shell.main,
    h('h1', {}, at('classes.title')),
    h('label', { className: 'inline' }, showInactive, ` ${at('classes.showInactive')}`),
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
