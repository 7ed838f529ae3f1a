/** The children: accent-insensitive search (the server folds), active or deleted, keyset pages. */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { field, h, replaceChildren } from '../../../kiosk/app/dom.js';
import { apiCall, errorMessage } from '../api.js';
import type { Shell } from '../shell.js';
import { when } from './adminKit.js';

const Classes = t.type({ items: t.array(t.type({ classId: t.string, name: t.string })) });
const Page = t.type({
  items: t.array(t.type({ studentId: t.string, displayName: t.string, updatedAt: t.string })),
  nextCursor: t.union([t.string, t.null]),
});

export const childrenPage = (shell: Shell): void => {
  const { t: tr } = shell;
  const search = h('input', { attrs: { type: 'search', autocomplete: 'off' } });
  const status = h(
    'select',
    {},
    h('option', { attrs: { value: 'ACTIVE' } }, tr('children.active')),
    h('option', { attrs: { value: 'DELETED' } }, tr('children.deleted')),
  );
  const classFilter = h('select', {}, h('option', { attrs: { value: '' } }, tr('children.allClasses')));
  const body = h('tbody');
  const pager = h('div', { className: 'pager' });
  let timer: ReturnType<typeof setTimeout> | undefined;

  const load = async (cursor?: string) => {
    const q = new URLSearchParams({ status: status.value, limit: '25' });
    if (search.value.trim() !== '') q.set('q', search.value.trim());
    if (classFilter.value !== '') q.set('classId', classFilter.value);
    if (cursor !== undefined) q.set('cursor', cursor);
    const a = await apiCall('GET', `/api/v1/students?${q}`);
    const page = Page.decode(a.json);
    if (a.status !== 200 || E.isLeft(page))
      return shell.say(
        a.status === 0 ? tr('error.network') : tr('error.generic', { message: errorMessage(a) }),
        'error',
      );
    replaceChildren(
      body,
      ...(page.right.items.length === 0
        ? [h('tr', {}, h('td', { attrs: { colspan: '3' } }, tr('children.none')))]
        : page.right.items.map((s) =>
            h(
              'tr',
              {},
              h('td', {}, h('a', { attrs: { href: `#/child/${s.studentId}` } }, s.displayName)),
              h('td', {}, when(s.updatedAt)),
              h(
                'td',
                {},
                h('a', { attrs: { href: `#/children/${s.studentId}/photo` } }, tr('children.photo')),
              ),
            ),
          )),
    );
    const next = page.right.nextCursor;
    replaceChildren(
      pager,
      cursor === undefined
        ? null
        : h('button', { attrs: { type: 'button' }, onClick: () => void load() }, tr('children.first')),
      next === null
        ? null
        : h('button', { attrs: { type: 'button' }, onClick: () => void load(next) }, tr('children.next')),
    );
  };
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => void load(), 250);
  });
  status.addEventListener('change', () => void load());
  classFilter.addEventListener('change', () => void load());
  replaceChildren(
    shell.main,
    h('h1', {}, tr('children.title')),
    h('p', {}, h('a', { className: 'button', attrs: { href: '#/children/new' } }, tr('children.new'))),
    h(
      'div',
      { className: 'filters' },
      field(tr('children.search'), search),
      labelled(tr('child.class'), classFilter),
      labelled(tr('children.status'), status),
    ),
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { attrs: { scope: 'col' } }, tr('children.name')),
          h('th', { attrs: { scope: 'col' } }, tr('children.updated')),
          h('th', { attrs: { scope: 'col' } }, tr('children.photo')),
        ),
      ),
      body,
    ),
    pager,
  );
  void (async () => {
    // Children stay in a deactivated class (0047): it can still be filtered by.
    const classes = Classes.decode((await apiCall('GET', '/api/v1/classes?includeInactive=true')).json);
    if (E.isRight(classes))
      for (const c of classes.right.items)
        classFilter.append(h('option', { attrs: { value: c.classId } }, c.name));
    await load();
  })();
};

let nextId = 0;
/**
 * A select with its label, tied by `for`: a label wrapping a select would make the options' text part
 * of its accessible name ("Turma Todas as turmas…"), which screen readers read out.
 */
export const labelled = (label: string, control: HTMLElement): HTMLDivElement => {
  nextId += 1;
  control.id = `control-${nextId}`;
  return h(
    'div',
    { className: 'field' },
    h('label', { className: 'field-label', attrs: { for: control.id } }, label),
    control,
  );
};
