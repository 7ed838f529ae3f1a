/**
 * Check-out at the door: the code from the label, checked on the tablet with the server's rules
 * (`decideCheckout`), the attempts lock counted on the tablet, and who collects the child. In
 * CODE_AND_ADULT mode the adult must be one on the child's list and, when the list has phone endings
 * for them, the last four digits must match. The child's photo (only with consent) and who may collect
 * them are shown to check the adult against; the emergency check-out is one tap away.
 */

import {
  base64Bytes,
  field,
  h,
  imageFromBytes,
  leaveButton,
  replaceChildren,
  submitOnce,
} from '../../../client/dom.js';
import type { RosterStudent } from '../../../domain/roster.js';
import { decideCheckout, normaliseCode, phoneSuffixMatches, utcDay } from '../../../rules/checkin.js';
import { mayEmergencyCheckout } from '../access.js';
import { makeAttempts } from '../attempts.js';
import { openCheckin } from '../checkinState.js';
import { base64UrlBytes, deviceDailyCode } from '../deviceCode.js';
import { pickupAdultLabel } from '../i18n.js';
import type { Kiosk, Screen } from '../kiosk.js';
import { checkOutDoc } from '../outboxEvents.js';
import { photoUrl } from '../photo.js';
import { photoOf, type RosterSessionDoc } from '../rosterIndex.js';
import { deskScreen } from './desk.js';
import { emergencyScreen } from './emergency.js';
import { pageGuardianScreen } from './pageGuardian.js';

type Adult = RosterStudent['pickup'][number];

/**
 * The child's photo: the thumbnail the roster carries (only while the child has an active image
 * consent, 0033), else one at an address on this origin (photo.ts); else nothing.
 */
export const studentPhoto = (kiosk: Kiosk, student: RosterStudent): HTMLElement | null => {
  const thumb = photoOf(kiosk.index(), student);
  if (thumb !== undefined)
    return imageFromBytes(
      base64Bytes(thumb.data),
      thumb.contentType,
      kiosk.t('checkout.photo', { name: student.displayName }),
      { className: 'child-photo', attrs: { 'data-test': 'child-photo' } },
    );
  const src = photoUrl(student.photoRef, location.origin);
  if (src === undefined) return null;
  const img = h('img', {
    className: 'child-photo',
    attrs: { src, alt: kiosk.t('checkout.photo', { name: student.displayName }), 'data-test': 'child-photo' },
  });
  // A reference the server cannot serve leaves no broken image at the door.
  img.addEventListener('error', () => img.remove());
  return img;
};

/** The child at the door: photo, allergy alert and who may collect them (a tap fills the name in). */
export const childPanel = (kiosk: Kiosk, student: RosterStudent, adults: HTMLElement): HTMLElement =>
  h(
    'div',
    { className: 'checkout-child' },
    studentPhoto(kiosk, student),
    h(
      'div',
      {},
      student.allergies === null
        ? null
        : h('p', { className: 'badge allergy' }, kiosk.t('desk.allergy', { text: student.allergies })),
      h('h2', {}, kiosk.t('checkout.mayCollect')),
      adults,
    ),
  );

/** Who may collect the child; tapping one fills the name in. */
export const pickupList = (
  kiosk: Kiosk,
  student: RosterStudent,
  choose: (adult: Adult) => void,
): HTMLElement => {
  const adults = h('ul', { className: 'adults', attrs: { 'data-test': 'may-collect' } });
  replaceChildren(
    adults,
    ...(student.pickup.length === 0
      ? [h('li', {}, kiosk.t('checkout.nobody'))]
      : student.pickup.map((a) =>
          h(
            'li',
            {},
            h(
              'button',
              { className: 'chip', attrs: { type: 'button' }, onClick: () => choose(a) },
              pickupAdultLabel(kiosk.lang(), a),
            ),
          ),
        )),
  );
  return adults;
};

export const checkoutScreen = (session: RosterSessionDoc, student: RosterStudent): Screen => ({
  name: 'checkout',
  render(kiosk: Kiosk) {
    const attempts = makeAttempts(kiosk.sync.outbox);
    const adultMode = kiosk.config().pickupMode === 'CODE_AND_ADULT';
    let chosen: Adult | undefined;
    const code = h('input', {
      className: 'code-input',
      attrs: {
        name: 'code',
        maxlength: '6',
        autocomplete: 'off',
        autocapitalize: 'characters',
        spellcheck: 'false',
        required: '',
      },
    });
    const person = h('input', { attrs: { name: 'pickupPerson', maxlength: '120', autocomplete: 'off' } });
    const suffix = h('input', { attrs: { name: 'phoneSuffix', inputmode: 'numeric', maxlength: '4' } });
    const message = h('p', { className: 'form-error', attrs: { role: 'alert' } });
    const confirm = h(
      'button',
      { className: 'primary big', attrs: { type: 'submit' } },
      kiosk.t('checkout.confirm'),
    );

    const attempt = async (): Promise<string | undefined> => {
      const open = openCheckin(kiosk.aspect(session.sessionId, student.studentId));
      if (open === undefined) return kiosk.t('checkout.notOpen');
      const pickupPerson = person.value.trim();
      if (pickupPerson === '') return kiosk.t('checkout.personRequired');
      const key = kiosk.index().dayKeys.get(utcDay(new Date(open.checkedInAt)));
      if (key === undefined) return kiosk.t('checkout.noKey');
      const expected = await deviceDailyCode(base64UrlBytes(key), student.studentId);
      const adult = chosen !== undefined && chosen.name === pickupPerson ? chosen : undefined;
      const adultAllowed =
        !adultMode ||
        (adult !== undefined &&
          (adult.phoneSuffixes.length === 0 ||
            adult.phoneSuffixes.some((p) => phoneSuffixMatches(p, suffix.value))));
      const decision = decideCheckout({
        status: 'CHECKED_IN',
        failedAttempts: await attempts.failed(open.checkInId),
        maxAttempts: kiosk.config().maxCheckoutAttempts,
        codeMatches: normaliseCode(code.value) === expected,
        adultAllowed,
      });
      switch (decision.kind) {
        case 'CHECK_OUT':
          await kiosk.record(
            checkOutDoc({
              eventId: crypto.randomUUID(),
              now: new Date(),
              studentId: student.studentId,
              sessionId: session.sessionId,
              checkInId: open.checkInId,
              pickupPerson,
              baseVersion: kiosk.aspect(session.sessionId, student.studentId).version,
            }),
          );
          kiosk.show(deskScreen(session));
          return undefined;
        case 'MISMATCH':
          await attempts.addFailure(open.checkInId);
          return decision.locksNow
            ? kiosk.t('checkout.locked')
            : kiosk.t('checkout.mismatch', { n: decision.remainingAttempts });
        case 'LOCKED':
          return kiosk.t('checkout.locked');
        case 'ADULT_NOT_AUTHORIZED':
          return kiosk.t('checkout.adultNotAllowed');
        default:
          return kiosk.t('checkout.notOpen');
      }
    };

    const onSubmit = submitOnce(confirm, message, attempt, () => code.select());

    const adults = pickupList(kiosk, student, (adult) => {
      chosen = adult;
      person.value = adult.name;
    });
    const emergencyAllowed = mayEmergencyCheckout(
      kiosk.session.current()?.user.roles ?? [],
      kiosk.config().emergencyCheckoutAdminOnly,
    );
    queueMicrotask(() => code.focus());
    return h(
      'section',
      { className: 'checkout' },
      h('h1', {}, kiosk.t('checkout.title', { name: student.displayName })),
      childPanel(kiosk, student, adults),
      h(
        'form',
        { onSubmit: (e) => void onSubmit(e) },
        field(kiosk.t('checkout.code'), code),
        field(kiosk.t('checkout.person'), person),
        adultMode ? field(kiosk.t('checkout.phoneSuffix'), suffix) : null,
        message,
        h(
          'div',
          { className: 'actions' },
          leaveButton(kiosk.t('checkout.back'), () => kiosk.show(deskScreen(session))),
          confirm,
          h(
            'button',
            {
              className: 'secondary big',
              attrs: { type: 'button', 'data-test': 'page-guardian' },
              onClick: () => kiosk.show(pageGuardianScreen(session, student)),
            },
            kiosk.t('checkout.page'),
          ),
          emergencyAllowed
            ? h(
                'button',
                {
                  className: 'danger-outline big',
                  attrs: { type: 'button' },
                  onClick: () => kiosk.show(emergencyScreen(session, student)),
                },
                kiosk.t('checkout.emergency'),
              )
            : null,
        ),
      ),
    );
  },
});
