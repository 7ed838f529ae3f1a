/**
 * Calendar dates as the office and the kiosk's reports take them, and as the office shows them
 * (decision 0043): dd/mm/aaaa in Portuguese and yyyy-mm-dd in English, whatever the browser's locale. An `<input type="date">` draws the browser's
 * own format, so a coordinator on a computer set to English read and typed 12/24/2026. What is sent
 * is always the API's ISO date. Pure: the fields that use these are in `dateInput.ts`.
 */
export type DateLang = 'pt-BR' | 'en';

export interface DateFormat {
  /** Shown beside the field and as its placeholder. */
  readonly hint: string;
  /** The `pattern` attribute: the shape only; `parseDate` checks the calendar. */
  readonly pattern: string;
  readonly invalid: string;
}

const FORMATS: Readonly<Record<DateLang, DateFormat>> = {
  'pt-BR': {
    hint: 'dd/mm/aaaa',
    pattern: '\\d{1,2}/\\d{1,2}/\\d{4}',
    invalid: 'Data inválida: escreva dd/mm/aaaa, por exemplo 24/12/2026.',
  },
  // Year first in English: 03/04/2026 reads as two different days in the US and in Britain.
  en: {
    hint: 'yyyy-mm-dd',
    pattern: '\\d{4}-\\d{1,2}-\\d{1,2}',
    invalid: 'Not a date: write yyyy-mm-dd, for example 2026-12-24.',
  },
};

export const dateFormat = (lang: DateLang): DateFormat => FORMATS[lang];

const SHAPES: Readonly<Record<DateLang, RegExp>> = {
  'pt-BR': /^(?<d>\d{1,2})\/(?<m>\d{1,2})\/(?<y>\d{4})$/,
  en: /^(?<y>\d{4})-(?<m>\d{1,2})-(?<d>\d{1,2})$/,
};

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** The ISO date of what was typed, or undefined when it is not a day of the calendar (31/02/2026). */
export const parseDate = (typed: string, lang: DateLang): string | undefined => {
  const parts = SHAPES[lang].exec(typed.trim())?.groups;
  if (parts === undefined) return undefined;
  const [y, m, d] = [Number(parts.y), Number(parts.m), Number(parts.d)];
  const at = new Date(Date.UTC(y, m - 1, d));
  // Date.UTC rolls 31/02 over into March and maps years below 100 onto the 1900s: both are refused.
  if (at.getUTCFullYear() !== y || at.getUTCMonth() !== m - 1 || at.getUTCDate() !== d) return undefined;
  return `${pad(y, 4)}-${pad(m)}-${pad(d)}`;
};

/** An ISO date as a date field writes it; anything else (not a date) is shown as it came. */
export const formatDate = (iso: string, lang: DateLang): string => {
  const parts = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  if (parts === null) return iso;
  const [, y, m, d] = parts;
  return lang === 'en' ? `${y}-${m}-${d}` : `${d}/${m}/${y}`;
};

/** The calendar day of an instant on the browser's clock, as an ISO date. */
export const localDay = (at: Date): string =>
  `${pad(at.getFullYear(), 4)}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}`;

/** An instant on the browser's clock: its day as `formatDate` writes it, then hours and minutes. */
export const formatInstant = (at: Date, lang: DateLang): string =>
  `${formatDate(localDay(at), lang)} ${pad(at.getHours())}:${pad(at.getMinutes())}`;
