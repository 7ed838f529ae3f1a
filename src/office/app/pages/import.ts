/**
 * Student import (decision 0030): choose the CSV, check it (dry run), map columns the server did not
 * recognise, read every row's outcome and errors, then apply the same file with the same choices.
 */
import * as E from 'fp-ts/lib/Either.js';
import { h, replaceChildren } from '../../../client/dom.js';
import { validationDetails } from '../../../client/transport.js';
import { IMPORT_FIELDS, type ImportReport, type ImportStudentsQuery } from '../../../domain/studentImport.js';
import { sayFailure } from '../calls.js';
import { api } from '../client.js';
import type { Key } from '../i18n.js';
import type { Shell } from '../shell.js';
import { labelled } from './children.js';

/** At most this many rows are drawn: the errors always, the rest up to the limit. */
const SHOWN_ROWS = 300;

export const importPage = (shell: Shell): void => {
  const { t: tr } = shell;
  const file = h('input', { attrs: { type: 'file', accept: '.csv,text/csv' } });
  const createClasses = h('input', { attrs: { type: 'checkbox' } });
  const mapping = h('fieldset', { className: 'mapping', attrs: { hidden: '' } });
  const selects = new Map<string, HTMLSelectElement>();
  const result = h('section', { attrs: { 'aria-live': 'polite', 'data-test': 'import-result' } });
  const apply = h('button', { attrs: { type: 'button', disabled: '' } }, tr('import.apply'));

  const query = (dryRun: boolean): ImportStudentsQuery => {
    const columns: Record<string, string> = {};
    for (const [fieldName, select] of selects)
      if (select.value !== '') columns[`column.${fieldName}`] = select.value;
    return {
      ...columns,
      dryRun: dryRun ? 'true' : 'false',
      createClasses: createClasses.checked ? 'true' : 'false',
    };
  };

  const showMapping = (headers: ReadonlyArray<string>) => {
    selects.clear();
    replaceChildren(
      mapping,
      h('legend', {}, tr('import.mapping')),
      ...IMPORT_FIELDS.map((name) => {
        const select = h(
          'select',
          {},
          h('option', { attrs: { value: '' } }, tr('import.none')),
          ...headers.map((header) => h('option', { attrs: { value: header } }, header)),
        );
        selects.set(name, select);
        return labelled(name, select);
      }),
    );
    mapping.hidden = false;
  };

  const showReport = (r: ImportReport) => {
    const errorsByRow = new Map<number, ImportReport['errors']>();
    for (const e of r.errors) errorsByRow.set(e.row, [...(errorsByRow.get(e.row) ?? []), e]);
    const rows = [
      ...r.outcomes.filter((o) => o.action === 'error'),
      ...r.outcomes.filter((o) => o.action !== 'error'),
    ]
      .slice(0, SHOWN_ROWS)
      .sort((a, b) => a.row - b.row);
    const actionKey: Record<ImportReport['outcomes'][number]['action'], Key> = {
      create: 'import.create',
      update: 'import.update',
      unchanged: 'import.unchanged',
      error: 'import.error',
    };
    replaceChildren(
      result,
      h(
        'p',
        { attrs: { 'data-test': 'import-summary' } },
        tr(r.dryRun ? 'import.summaryDry' : 'import.summary', {
          rows: r.rows,
          created: r.created,
          updated: r.updated,
          unchanged: r.unchanged,
          errors: errorsByRow.size,
        }),
      ),
      r.classesCreated.length === 0
        ? null
        : h('p', {}, tr('import.classesCreated', { names: r.classesCreated.join(', ') })),
      h(
        'table',
        {},
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...(['import.row', 'import.action', 'import.column', 'import.problem'] as const).map((k) =>
              h('th', { attrs: { scope: 'col' } }, tr(k)),
            ),
          ),
        ),
        h(
          'tbody',
          {},
          ...rows.flatMap((o) => {
            const errs = errorsByRow.get(o.row) ?? [];
            const cells = (e: ImportReport['errors'][number] | undefined) => [
              h('td', {}, e?.column ?? ''),
              h('td', {}, e === undefined ? '' : e.message),
            ];
            return [
              h(
                'tr',
                { className: o.action, attrs: { 'data-row': String(o.row) } },
                h('td', {}, String(o.row)),
                h('td', {}, tr(actionKey[o.action])),
                ...cells(errs[0]),
              ),
              ...errs.slice(1).map((e) => h('tr', { className: 'error' }, h('td'), h('td'), ...cells(e))),
            ];
          }),
        ),
      ),
    );
  };

  const run = async (dryRun: boolean) => {
    const chosen = file.files?.[0];
    if (chosen === undefined) return shell.say(tr('import.noFile'), 'error');
    const report = await api.importStudents({
      query: query(dryRun),
      body: { bytes: chosen, type: 'text/csv' },
    });
    if (E.isRight(report)) {
      showReport(report.right);
      shell.say('');
      // Applying is offered once the same file and choices were checked, and once only.
      apply.disabled = !dryRun;
      return;
    }
    // Columns the server could not map: their headers, to be mapped by hand.
    const headers = validationDetails(report.left)?.headers;
    if (headers !== undefined) showMapping(headers);
    sayFailure(shell, report.left);
  };
  // A new file or a changed choice must be checked again before it can be applied.
  for (const el of [file, createClasses]) el.addEventListener('change', () => (apply.disabled = true));
  mapping.addEventListener('change', () => (apply.disabled = true));
  apply.addEventListener('click', () => void run(false));

  replaceChildren(
    shell.main,
    h('h1', {}, tr('import.title')),
    h('p', {}, tr('import.help')),
    labelled(tr('import.file'), file),
    h('label', { className: 'check' }, createClasses, ' ', tr('import.createClasses')),
    mapping,
    h(
      'p',
      { className: 'actions' },
      h('button', { attrs: { type: 'button' }, onClick: () => void run(true) }, tr('import.dryRun')),
      ' ',
      apply,
    ),
    result,
  );
};
