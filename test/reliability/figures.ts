/**
 * The reliability battery prints one measured figure per test, so a reader of the CI log sees what
 * was measured and not only that it passed. Figures also gather in a JSON file when
 * `RELIABILITY_FIGURES` names one (how design-docs/reliability.md is refreshed).
 */
import { appendFileSync } from 'node:fs';

export const figure = (row: string, text: string): void => {
  process.stdout.write(`      ↳ ${row}: ${text}\n`);
  const file = process.env.RELIABILITY_FIGURES;
  if (file !== undefined && file !== '') {
    appendFileSync(file, `${JSON.stringify({ row, text, at: new Date().toISOString() })}\n`);
  }
};
