/**
 * Self-service mode's boundaries (decision 0052), pure: which screens a family may reach, and when an
 * untouched screen goes back to the start. The screens themselves are `screens/selfService.ts`.
 */

/**
 * The screens of the mode: the start (with the scan's overlay over it), the phone lookup, a family, the labels, and the
 * volunteer's sign-in that leaves it. Anything else (name search, sessions, check-out, the admins'
 * view) is refused while the mode is on, whoever asks for it: a link, a typed address, a bug.
 */
export const SELF_SERVICE_SCREENS: ReadonlySet<string> = new Set([
  'self-service',
  'self-service-exit',
  'family-lookup',
  'family',
  'label',
]);

export const selfServiceAllows = (screenName: string): boolean => SELF_SERVICE_SCREENS.has(screenName);

/**
 * Whether the screen showing has sat untouched long enough to go back to the start. The start alone
 * never "times out" (there is nothing of a family's on it); with the scan's overlay open over it, it
 * does (the camera is on).
 */
export const idleExpired = (
  screenName: string | undefined,
  overlayOpen: boolean,
  lastTouchMs: number,
  nowMs: number,
  idleSeconds: number,
): boolean => (screenName !== 'self-service' || overlayOpen) && nowMs - lastTouchMs >= idleSeconds * 1000;
