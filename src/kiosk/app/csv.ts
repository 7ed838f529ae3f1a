/**
 * CSV files for the admins' downloads, built on the tablet from what the screen shows. Every cell goes
 * through the formula rule the server's CSV uses too (`src/lib/csvFormulas.ts`). Pure.
 */
import { neutralise } from '../../lib/csvFormulas.js';

/** Every cell quoted (RFC 4180: a quote inside is doubled), so commas, semicolons and new lines stay inside. */
const quote = (cell: string): string => `"${neutralise(cell).replace(/"/g, '""')}"`;

/**
 * A whole file: a byte-order mark (without it Excel reads UTF-8 as the local code page, and "João"
 * becomes "JoÃ£o"), the header line, one line per row, CRLF line ends.
 */
export const toCsv = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  `\ufeff${[header, ...rows].map((r) => r.map(quote).join(',')).join('\r\n')}\r\n`;
