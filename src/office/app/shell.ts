/** What every page gets: the translator, the element to render into, navigation and a message line. */
import type { T } from './i18n.js';

export interface Shell {
  readonly t: T;
  /** The page's own element: replaced whole on every navigation. */
  readonly main: HTMLElement;
  go(hash: string): void;
  /** A message read out by screen readers (`role="status"` or `role="alert"`). */
  say(text: string, kind?: 'info' | 'error'): void;
}
