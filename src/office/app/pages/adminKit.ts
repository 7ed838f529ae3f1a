/** What the administration pages share: their words for a failure, tables and SVG elements. */
import { pageLang } from '../../../client/dateInput.js';
import { formatDate, formatInstant } from '../../../client/dates.js';
import { type Child, h } from '../../../client/dom.js';
import type { FailureWords } from '../calls.js';
import type { AdminT } from './adminText.js';

/** The administration pages' words for a failure: a 403 is the account's role (the server decides). */
export const adminWords = (at: AdminT): FailureWords => ({ forbidden: at('common.forbidden') });

/** A table with column headers (`scope="col"`) and a single row saying so when there is nothing. */
export const table = (
  headers: ReadonlyArray<string>,
  rows: ReadonlyArray<HTMLTableRowElement>,
  empty: string,
  test?: string,
): HTMLTableElement =>
  h(
    'table',
    test === undefined ? {} : { attrs: { 'data-test': test } },
    h('thead', {}, h('tr', {}, ...headers.map((x) => h('th', { attrs: { scope: 'col' } }, x)))),
    h(
      'tbody',
      {},
      ...(rows.length === 0
        ? [h('tr', {}, h('td', { attrs: { colspan: String(headers.length) } }, empty))]
        : rows),
    ),
  );

export const row = (...cells: ReadonlyArray<Child>): HTMLTableRowElement =>
  h('tr', {}, ...cells.map((c) => h('td', {}, c)));

/** An instant on the office's clock, in the office's date format (never the browser locale's). */
export const when = (iso: string | null | undefined): string =>
  iso === null || iso === undefined ? '' : formatInstant(new Date(iso), pageLang());

export const day = (date: string): string => formatDate(date, pageLang());

const SVG_NS = 'http://www.w3.org/2000/svg';
/** An SVG element with attributes (never `style`) and children: the chart is drawn with these only. */
export const svg = (
  tag: string,
  attrs: Readonly<Record<string, string | number>>,
  ...children: ReadonlyArray<Node | string>
): SVGElement => {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  for (const c of children) el.append(typeof c === 'string' ? document.createTextNode(c) : c);
  return el;
};

/** A section with its heading, so the page reads as an outline. */
export const section = (title: string, ...children: ReadonlyArray<Child>): HTMLElement =>
  h('section', {}, h('h2', {}, title), ...children);
