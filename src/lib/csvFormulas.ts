/**
 * The one rule for CSV cells that a spreadsheet could run as a formula, used by the server's reports
 * (`src/http/routes/reportsRoutes.ts`) and by the kiosk's downloads (`src/kiosk/app/csv.ts`), so a
 * file is as safe whichever of them wrote it. Names come from people (a child's name, a user's display
 * name, a pick-up adult), and a spreadsheet runs `=HYPERLINK(...)` or `@SUM(...)` typed into a name
 * field. Such cells get a leading apostrophe, as csv-stringify's `escape_formulas` does, and a bit
 * stricter: leading blanks and the full-width signs some spreadsheets also accept are caught too.
 * Pure, and free of Node imports: the kiosk bundles it for the browser.
 */

/** The first visible character of a cell a spreadsheet would take as the start of a formula. */
const FORMULA_START = /^[\s\u00a0\u3000]*[=+\-@\uff1d\uff0b\uff0d\uff20]/u;

/** The cell as a spreadsheet must read it: as text, never as a formula. */
export const neutralise = (cell: string): string =>
  FORMULA_START.test(cell) || cell.startsWith('\t') || cell.startsWith('\r') ? `'${cell}` : cell;
