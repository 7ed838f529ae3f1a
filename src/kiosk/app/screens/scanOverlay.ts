/**
 * Scanning a family pass (decisions 0049, 0053): a modal over the current screen with the camera's
 * picture and a cancel button. Each QR code read is checked offline against the roster; a pass of
 * this deployment's family opens the family (`OpenFamily`), anything else says why in the overlay,
 * records nothing, and the camera keeps looking for another card. Closing the overlay, by its button,
 * the Escape key, or a family opening, turns the camera off.
 */

import * as E from 'fp-ts/lib/Either.js';
import { h } from '../../../client/dom.js';
import type { RosterStudent } from '../../../domain/roster.js';
import type { PassFamily, PassRefusal } from '../../../rules/familyPass.js';
import { checkFamilyPass } from '../familyPass.js';
import type { MessageKey } from '../i18n.js';
import type { Kiosk } from '../kiosk.js';
import type { RosterSessionDoc } from '../rosterIndex.js';
import { type CameraProblem, startScanner } from '../scanner.js';
import { sessionFor, siblingsScreen } from './siblings.js';

/**
 * Opens the screen of the family a pass stands for and answers undefined, or answers why it opens
 * none (no child of the family has a session now): the overlay shows that and stays open.
 */
export type OpenFamily = (family: PassFamily) => string | undefined;

const REFUSAL_TEXT: Readonly<Record<PassRefusal | CameraProblem, MessageKey>> = {
  NOT_A_PASS: 'scan.notAPass',
  OTHER_DEPLOYMENT: 'scan.otherDeployment',
  REVOKED: 'scan.revoked',
  UNKNOWN_PASS: 'scan.unknownPass',
  NO_CHILDREN: 'scan.noChildren',
  CAMERA_REFUSED: 'scan.cameraRefused',
  CAMERA_ABSENT: 'scan.cameraAbsent',
};

/** Opens the scan overlay; `openFamily` is what a recognised pass leads to. */
export const openScanOverlay = (kiosk: Kiosk, openFamily: OpenFamily): void => {
  const video = h('video', {
    className: 'scan-video',
    attrs: { 'aria-label': kiosk.t('scan.camera'), 'data-test': 'scan-video' },
  });
  const message = h('p', {
    className: 'notice scan-message',
    attrs: { role: 'status', 'data-test': 'scan-message' },
  });
  const cancel = h(
    'button',
    { className: 'quiet big', attrs: { type: 'button' }, onClick: () => dialog.close() },
    kiosk.t('scan.cancel'),
  );
  const dialog = h(
    'dialog',
    { className: 'scan-overlay', attrs: { 'aria-labelledby': 'scan-title', 'data-test': 'scan-overlay' } },
    h('h2', { attrs: { id: 'scan-title' } }, kiosk.t('scan.title')),
    h('p', { className: 'scan-hint' }, kiosk.t('scan.hint')),
    video,
    message,
    h('div', { className: 'actions' }, cancel),
  );
  const say = (outcome: string, text: string): void => {
    dialog.dataset.outcome = outcome;
    message.textContent = text;
  };

  let stop: (() => void) | undefined;
  let closed = false;
  // The camera may read again while a pass is being checked: one at a time, the latest read wins later.
  let checking = false;
  dialog.addEventListener('close', () => {
    closed = true;
    stop?.();
    dialog.remove();
  });

  const onText = async (text: string): Promise<void> => {
    if (checking || closed) return;
    checking = true;
    try {
      const checked = await checkFamilyPass(kiosk.index(), text);
      if (closed) return;
      if (E.isLeft(checked)) {
        say(checked.left, kiosk.t(REFUSAL_TEXT[checked.left]));
        return;
      }
      const problem = openFamily(checked.right);
      if (problem === undefined) dialog.close();
      else say('NO_SESSION', problem);
    } finally {
      checking = false;
    }
  };

  document.body.append(dialog);
  dialog.showModal();
  say('STARTING', kiosk.t('scan.starting'));
  void startScanner(video, (text) => void onText(text)).then((started) => {
    if (typeof started === 'string') {
      say(started, kiosk.t(REFUSAL_TEXT[started]));
      video.hidden = true;
      return;
    }
    dialog.dataset.decoder = started.decoder;
    if (closed) started.stop();
    else {
      stop = started.stop;
      say('SCANNING', '');
    }
  });
};

/**
 * What a pass opens at a desk until the family screen of issue #39 lands: the brothers-and-sisters
 * screen of 0027 for the family's first child with a session today (each child ticked in their own
 * class's session), or a refusal when none of them has one.
 */
export const openFamilyAtDesk =
  (kiosk: Kiosk, desk: RosterSessionDoc): OpenFamily =>
  (family) => {
    const index = kiosk.index();
    const children = family.studentIds.flatMap((id): RosterStudent[] => {
      const child = index.students.get(id);
      return child === undefined ? [] : [child];
    });
    const first = children.find((child) => sessionFor(kiosk, desk, child) !== undefined);
    if (first === undefined) return kiosk.t('scan.noSession', { name: family.guardianName });
    kiosk.show(siblingsScreen(desk, first));
    return undefined;
  };
