/**
 * Where a scanned family pass enters the kiosk (decision 0052): the camera scan (branch family-scan)
 * calls `openFamilyFromPass` with each decoded text. The pass is checked offline against the roster
 * (0049); the family's screen opens, or a screen says why not, and nothing is recorded for a refusal.
 */
import * as E from 'fp-ts/lib/Either.js';
import { h, leaveButton } from '../../client/dom.js';
import type { PassRefusal } from '../../rules/familyPass.js';
import { checkFamilyPass } from './familyPass.js';
import type { Kiosk, Screen } from './kiosk.js';
import { type FamilyOrigin, familyScreen } from './screens/family.js';
import { selfServiceOn, selfServiceOrigin } from './screens/selfService.js';
import { sessionsScreen } from './screens/sessions.js';

/** A volunteer's scan at the desk goes back to the sessions; a family's, to self-service's start. */
export const scanOrigin = (): FamilyOrigin =>
  selfServiceOn() ? selfServiceOrigin : { selfService: false, back: () => sessionsScreen };

/** Why a pass opens no family, in words a guardian understands. */
export const familyRefusedScreen = (refusal: PassRefusal, origin: FamilyOrigin): Screen => ({
  name: 'family-refused',
  update: () => undefined,
  render: (kiosk: Kiosk) =>
    h(
      'section',
      { className: 'family-refused' },
      h('h1', {}, kiosk.t('pass.refusedTitle')),
      h(
        'p',
        {
          className: 'notice',
          attrs: { role: 'alert', 'data-test': 'pass-refusal', 'data-refusal': refusal },
        },
        kiosk.t(`pass.${refusal}`),
      ),
      h(
        'div',
        { className: 'actions' },
        leaveButton(kiosk.t('family.back'), () => kiosk.show(origin.back())),
      ),
    ),
});

/**
 * Checks a scanned text and shows the family it stands for, or why it stands for none; answers the
 * outcome too, so the scanner can tell a refusal (and keep its camera) from an opened family.
 */
export const openFamilyFromPass = async (
  kiosk: Pick<Kiosk, 'index' | 'show'>,
  scanned: string,
  origin: FamilyOrigin = scanOrigin(),
): Promise<E.Either<PassRefusal, string>> => {
  const checked = await checkFamilyPass(kiosk.index(), scanned);
  if (E.isLeft(checked)) {
    kiosk.show(familyRefusedScreen(checked.left, origin));
    return E.left(checked.left);
  }
  kiosk.show(familyScreen(checked.right.familyKey, origin));
  return E.right(checked.right.familyKey);
};
