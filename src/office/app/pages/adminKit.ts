/** What the administration pages share: failure messages, tables, a file download and SVG elements. */
import { type Child, h } from '../../../kiosk/app/dom.js';
import { type Answer, errorMessage } from '../api.js';
import { officeLang } from '../dateInput.js';
import { formatDate, formatInstant } from '../dates.js';
import type { Shell } from '../shell.js';
import type { AdminT } from './adminText.js';

/** Says why a call failed: the network, the role (the server decides), or the server's own words. */
export const sayFailure = (shell: Shell, at: AdminT, a: Answer): void =>
  shell.say(
    a.status === 0
      ? shell.t('error.network')
      : a.status === 403
        ? at('common.forbidden')
        : shell.t('error.generic', { message: errorMessage(a) }),
    'error',
  );

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
  iso === null || iso === undefined ? '' : formatInstant(new Date(iso), officeLang());

export const day = (date: string): string => formatDate(date, officeLang());

/**
 * Hands a file to the browser: a Blob behind an `<a download>` clicked once, its URL released right
 * after. A blob URL is a navigation, not a script or style, so the CSP holds.
 */
export const download = (filename: string, content: string | Uint8Array<ArrayBuffer>, type: string): void => {
  const url = URL.createObjectURL(new Blob([content], { type }));
  const a = h('a', { attrs: { href: url, download: filename } });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
};

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
