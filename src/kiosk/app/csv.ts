/**
 * CSV files for the admins' downloads, built on the tablet from what the screen shows. Names come from
 * people (a child's name, a user's display name, a pick-up adult), so a cell is never allowed to read
 * as a formula: a spreadsheet runs `=HYPERLINK(...)` or `@SUM(...)` typed into a name field. Such cells
 * get a leading apostrophe, as the server's own CSV does (csv-stringify's `escape_formulas`), and a bit
 * stricter: leading blanks and the full-width signs some spreadsheets also accept are caught too. Pure.
 */

/** The first visible character of a cell a spreadsheet would take as the start of a formula. */
const FORMULA_START = /^[\s\u00a0\u3000]*[=+\-@\uff1d\uff0b\uff0d\uff20]/u;

/** The cell as a spreadsheet must read it: as text, never as a formula. */
export const neutralise = (cell: string): string =>
  FORMULA_START.test(cell) || cell.startsWith('\t') || cell.startsWith('\r') ? `'${cell}` : cell;

/** Every cell quoted (RFC 4180: a quote inside is doubled), so commas, semicolons and new lines stay inside. */
const quote = (cell: string): string => `"${neutralise(cell).replace(/"/g, '""')}"`;

/**
 * A whole file: a byte-order mark (without it Excel reads UTF-8 as the local code page, and "João"
 * becomes "JoÃ£o"), the header line, one line per row, CRLF line ends.
 */
export const toCsv = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  `\ufeff${[header, ...rows].map((r) => r.map(quote).join(',')).join('\r\n')}\r\n`;
