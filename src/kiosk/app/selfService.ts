/**
 * Self-service mode's boundaries (decision 0052), pure: which screens a family may reach, and when an
 * untouched screen goes back to the start. The screens themselves are `screens/selfService.ts`.
 */

/**
 * The screens of the mode: the start, the phone lookup, a family and its refusal, the labels, and the
 * volunteer's sign-in that leaves it. Anything else (name search, sessions, check-out, the admins'
 * view) is refused while the mode is on, whoever asks for it: a link, a typed address, a bug.
 */
export const SELF_SERVICE_SCREENS: ReadonlySet<string> = new Set([
  'self-service',
  'self-service-exit',
  'family-lookup',
  'family',
  'family-refused',
  'label',
]);

export const selfServiceAllows = (screenName: string): boolean => SELF_SERVICE_SCREENS.has(screenName);

/**
 * Whether the screen showing has sat untouched long enough to go back to the start (the start itself
 * never "times out": there is nothing of a family's on it).
 */
export const idleExpired = (
  screenName: string | undefined,
  lastTouchMs: number,
  nowMs: number,
  idleSeconds: number,
): boolean => screenName !== 'self-service' && nowMs - lastTouchMs >= idleSeconds * 1000;
