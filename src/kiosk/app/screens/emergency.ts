/**
 * Emergency check-out: no code (lost stub, locked check-out, a call from a parent), but who collected
 * the child and why are recorded (`EMERGENCY_CHECKOUT`, justification of 10 to 500 characters, as the
 * server accepts it). Open to those the church's `emergencyCheckoutAdminOnly` policy allows, offline
 * too; the photo and the list of who may collect are there to check the adult against.
 */

import { field, h, leaveButton, submitOnce } from '../../../client/dom.js';
import type { RosterStudent } from '../../../domain/roster.js';
import { mayEmergencyCheckout } from '../access.js';
import { openCheckin } from '../checkinState.js';
import type { Kiosk, Screen } from '../kiosk.js';
import { emergencyCheckoutDoc } from '../outboxEvents.js';
import type { RosterSessionDoc } from '../rosterIndex.js';
import { checkoutScreen, childPanel, pickupList } from './checkout.js';
import { deskScreen } from './desk.js';

export const JUSTIFICATION_MIN = 10;
export const JUSTIFICATION_MAX = 500;
const PERSON_MAX = 120;

export const emergencyScreen = (session: RosterSessionDoc, student: RosterStudent): Screen => ({
  name: 'emergency',
  render(kiosk: Kiosk) {
    const person = h('input', {
      attrs: { name: 'pickupPerson', maxlength: String(PERSON_MAX), autocomplete: 'off', required: '' },
    });
    const justification = h('textarea', {
      className: 'justification',
      attrs: {
        name: 'justification',
        rows: '4',
        minlength: String(JUSTIFICATION_MIN),
        maxlength: String(JUSTIFICATION_MAX),
        required: '',
      },
    });
    const message = h('p', { className: 'form-error', attrs: { role: 'alert' } });
    const confirm = h(
      'button',
      { className: 'danger big', attrs: { type: 'submit' } },
      kiosk.t('emergency.confirm'),
    );

    const attempt = async (): Promise<string | undefined> => {
      const roles = kiosk.session.current()?.user.roles ?? [];
      if (!mayEmergencyCheckout(roles, kiosk.config().emergencyCheckoutAdminOnly))
        return kiosk.t('emergency.notAllowed');
      const view = kiosk.aspect(session.sessionId, student.studentId);
      const open = openCheckin(view);
      if (open === undefined) return kiosk.t('checkout.notOpen');
      const pickupPerson = person.value.trim();
      if (pickupPerson === '' || pickupPerson.length > PERSON_MAX) return kiosk.t('checkout.personRequired');
      const why = justification.value.trim();
      if (why.length < JUSTIFICATION_MIN || why.length > JUSTIFICATION_MAX)
        return kiosk.t('emergency.justificationLength');
      await kiosk.record(
        emergencyCheckoutDoc({
          eventId: crypto.randomUUID(),
          now: new Date(),
          studentId: student.studentId,
          sessionId: session.sessionId,
          checkInId: open.checkInId,
          pickupPerson,
          justification: why,
          baseVersion: view.version,
        }),
      );
      kiosk.show(deskScreen(session));
      return undefined;
    };

    const onSubmit = submitOnce(confirm, message, attempt);

    queueMicrotask(() => person.focus());
    return h(
      'section',
      { className: 'checkout emergency' },
      h('h1', {}, kiosk.t('emergency.title', { name: student.displayName })),
      h('p', { className: 'emergency-hint' }, kiosk.t('emergency.hint')),
      childPanel(
        kiosk,
        student,
        pickupList(kiosk, student, (adult) => {
          person.value = adult.name;
        }),
      ),
      h(
        'form',
        // The checks below say what is wrong in the kiosk's language; the browser's bubbles would not.
        {
          attrs: { novalidate: '' },
          onSubmit: (e) => void onSubmit(e),
          onInput: () => {
            message.textContent = '';
          },
        },
        field(kiosk.t('emergency.person'), person),
        field(kiosk.t('emergency.justification'), justification),
        h('p', { className: 'field-hint' }, kiosk.t('emergency.justificationHint')),
        message,
        h(
          'div',
          { className: 'actions' },
          leaveButton(kiosk.t('checkout.back'), () => kiosk.show(checkoutScreen(session, student))),
          confirm,
        ),
      ),
    );
  },
});
