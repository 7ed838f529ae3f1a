/** The children: accent-insensitive search (the server folds), active or deleted, keyset pages. */
import * as E from 'fp-ts/lib/Either.js';
import { field, h, replaceChildren } from '../../../client/dom.js';
import type { StudentPage } from '../../../domain/student.js';
import { onAnswer } from '../calls.js';
import { api } from '../client.js';
import type { Shell } from '../shell.js';
import { when } from './adminKit.js';

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

  // Only the answer to the latest request is drawn: the page's first list (active children) came
  // back after the one asked for by switching to the deleted, and drew over it (an e2e run in CI).
  let latest = 0;
  const load = (cursor?: string) => {
    latest += 1;
    const mine = latest;
    return onAnswer(
      shell,
      api.listStudents({
        query: {
          status: status.value === 'DELETED' ? 'DELETED' : 'ACTIVE',
          limit: '25',
          ...(search.value.trim() === '' ? {} : { q: search.value.trim() }),
          ...(classFilter.value === '' ? {} : { classId: classFilter.value }),
          ...(cursor === undefined ? {} : { cursor }),
        },
      }),
      (page) => {
        if (mine === latest) draw(page, cursor);
      },
    );
  };
  const draw = (page: StudentPage, cursor: string | undefined) => {
    replaceChildren(
      body,
      ...(page.items.length === 0
        ? [h('tr', {}, h('td', { attrs: { colspan: '3' } }, tr('children.none')))]
        : page.items.map((s) =>
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
    const next = page.nextCursor;
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
    // Children stay in a deactivated class (0047): it can still be filtered by. Without the classes the
    // list still loads, unfiltered.
    const classes = await api.listClasses({ query: { includeInactive: 'true' } });
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
