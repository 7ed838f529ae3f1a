/**
 * The date fields of the office and the kiosk (decision 0043): a text input in the format of `dates.ts`,
 * not an `<input type="date">`, whose format is the browser's locale's. Numeric keyboard, the format
 * shown beside the field, and what is not a date refused by the form itself (a custom validity message
 * the browser reports on submit, also written under the field and named by `aria-describedby`).
 */

import { type DateLang, dateFormat, formatDate, parseDate } from './dates.js';
import { h } from './dom.js';

/** The page's language, as each app sets it on `<html lang>`. */
export const pageLang = (): DateLang => (document.documentElement.lang === 'en' ? 'en' : 'pt-BR');

export interface DateInput {
  readonly input: HTMLInputElement;
  /** The ISO date typed; null when the field is empty; undefined when what is typed is no date. */
  iso(): string | null | undefined;
  /** Shows an ISO date (a record read after the field was drawn), or empties the field. */
  set(iso: string | null): void;
}

/** `initial` is an ISO date (or null); `attrs` add to the input's (`required`, an `aria-label`). */
export const dateInput = (
  initial: string | null = null,
  attrs: Readonly<Record<string, string>> = {},
): DateInput => {
  const lang = pageLang();
  const format = dateFormat(lang);
  const input = h('input', {
    attrs: {
      type: 'text',
      inputmode: 'numeric',
      autocomplete: 'off',
      maxlength: '10',
      pattern: format.pattern,
      placeholder: format.hint,
      title: format.hint,
      // The stored value as the field's default: a form reset shows it again.
      value: initial === null ? '' : formatDate(initial, lang),
      ...attrs,
    },
  });
  const iso = () => (input.value.trim() === '' ? null : parseDate(input.value, lang));
  const check = () => input.setCustomValidity(iso() === undefined ? format.invalid : '');
  input.addEventListener('input', check);
  check();
  return {
    input,
    iso,
    set(value) {
      input.value = value === null ? '' : formatDate(value, lang);
      check();
    },
  };
};

let nextId = 0;

/**
 * A labelled date field: the format under the label, the error under the field once one is seen.
 * `className` is the label's (`field` unless an app lays it out its own way).
 */
export const dateField = (label: string, date: DateInput, className = 'field'): HTMLLabelElement => {
  nextId += 1;
  const hintId = `date-hint-${nextId}`;
  const errorId = `date-error-${nextId}`;
  const { input } = date;
  const hint = h('span', { className: 'hint', attrs: { id: hintId } }, dateFormat(pageLang()).hint);
  const error = h('span', { className: 'field-error', attrs: { id: errorId, 'aria-live': 'polite' } });
  input.setAttribute('aria-describedby', `${hintId} ${errorId}`);
  const show = () => {
    error.textContent = input.validity.customError ? input.validationMessage : '';
    input.setAttribute('aria-invalid', String(input.validity.customError));
  };
  // On leaving the field and when a submit finds it invalid; while typing only once it is fixed.
  input.addEventListener('blur', show);
  input.addEventListener('invalid', show);
  input.addEventListener('input', () => {
    if (!input.validity.customError) show();
  });
  return h('label', { className }, h('span', { className: 'field-label' }, label), hint, input, error);
};
