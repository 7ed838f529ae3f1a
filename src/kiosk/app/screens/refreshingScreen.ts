import type { Kiosk, Screen } from '../kiosk.js';

/** A screen as drawn, and how to bring it up to date in place. */
export interface Drawn {
  readonly element: HTMLElement;
  readonly refresh: () => void;
}

/**
 * A screen that a roster pull refreshes in place rather than draws again: what the volunteer ticked
 * or typed stays. Until it is first drawn there is nothing to refresh.
 */
export const refreshingScreen = (name: string, draw: (kiosk: Kiosk) => Drawn): Screen => {
  let refresh: (() => void) | undefined;
  return {
    name,
    update: () => refresh?.(),
    render: (kiosk) => {
      const drawn = draw(kiosk);
      refresh = drawn.refresh;
      return drawn.element;
    },
  };
};
