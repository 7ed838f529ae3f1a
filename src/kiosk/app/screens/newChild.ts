/**
 * A family's first visit: "new child" registers the child as a visitor in the session's class and
 * checks them in, with the label, in one go. Online and offline alike: the tablet generates the
 * child's id and records VISITOR_REGISTERED then CHECK_IN in its outbox, and the server creates the
 * visitor with that id when they arrive. The fields are checked with the server's own codec of the
 * event, so the form refuses exactly what the API would.
 */
import { field, h, leaveButton, replaceChildren, submitOnce } from '../../../client/dom.js';
import type { Kiosk, Screen } from '../kiosk.js';
import { type VisitorInput, visitorProblems, visitorRegisteredDoc } from '../outboxEvents.js';
import type { RosterSessionDoc } from '../rosterIndex.js';
import { admissionAt, checkInChild, deskScreen, showRefusal } from './desk.js';

/** The form's inputs, by the field they fill. */
type Inputs = Readonly<Record<keyof VisitorInput, HTMLInputElement | HTMLTextAreaElement>>;

const optional = (s: string): string | undefined => (s.trim() === '' ? undefined : s.trim());

export const newChildScreen = (session: RosterSessionDoc): Screen => ({
  name: 'new-child',
  // A roster pull while a guardian dictates must not wipe the form: the room's rule is judged with
  // the roster of the moment the volunteer confirms, so nothing on the form depends on it.
  update: () => undefined,
  render(kiosk: Kiosk) {
    const input = (name: string, extra: Readonly<Record<string, string>> = {}) =>
      h('input', { attrs: { name, autocomplete: 'off', ...extra } });
    const inputs: Inputs = {
      displayName: input('displayName', { maxlength: '120' }),
      guardianName: input('guardianName', { maxlength: '120' }),
      phone: input('phone', { type: 'tel', maxlength: '30' }),
      allergies: h('textarea', { attrs: { name: 'allergies', rows: '2', maxlength: '2000' } }),
      specialNeeds: h('textarea', { attrs: { name: 'specialNeeds', rows: '2', maxlength: '2000' } }),
    };
    const message = h('p', { className: 'form-error', attrs: { role: 'alert' } });
    const confirm = h(
      'button',
      { className: 'primary big', attrs: { type: 'submit' } },
      kiosk.t('newChild.confirm'),
    );

    const offer = h('div', { className: 'offer' });

    /**
     * Registers the visitor and checks them in, judged first as a first-time visitor (the room's rules
     * only: the record is the office's to complete); an ADMIN's override passes a refusal.
     */
    const register = async (override?: { readonly justification: string }): Promise<string | undefined> => {
      replaceChildren(offer);
      const allergies = optional(inputs.allergies.value);
      const specialNeeds = optional(inputs.specialNeeds.value);
      const visitor: VisitorInput = {
        displayName: inputs.displayName.value.trim(),
        guardianName: inputs.guardianName.value.trim(),
        phone: inputs.phone.value.trim(),
        ...(allergies === undefined ? {} : { allergies }),
        ...(specialNeeds === undefined ? {} : { specialNeeds }),
      };
      const problems = visitorProblems(visitor);
      for (const [name, el] of Object.entries(inputs))
        el.toggleAttribute(
          'aria-invalid',
          [...problems].some((p) => p === name),
        );
      if (problems.size > 0) return kiosk.t('newChild.invalid');
      if (kiosk.index().dayKeys.size === 0) return kiosk.t('checkin.noKey');
      // Judged before anything is recorded: a child refused at the door is not registered either.
      const decision = admissionAt(kiosk, session, 'NEW_VISITOR', { override });
      if (decision.kind === 'REFUSE') {
        showRefusal(kiosk, offer, [{ refusal: decision, name: visitor.displayName }], (justification) =>
          register({ justification }),
        );
        return undefined;
      }
      const studentId = crypto.randomUUID();
      await kiosk.record(
        visitorRegisteredDoc(visitor, {
          eventId: crypto.randomUUID(),
          studentId,
          classId: session.classId,
          now: new Date(),
        }),
      );
      // The index now holds the child from the outbox; the check-in is the desk's, label included.
      const student = kiosk.index().students.get(studentId);
      if (student === undefined) throw new Error('a registered visitor is missing from the index');
      return checkInChild(kiosk, session, student, override);
    };
    const attempt = () => register();

    const onSubmit = submitOnce(confirm, message, attempt);

    queueMicrotask(() => inputs.displayName.focus());
    return h(
      'section',
      { className: 'new-child' },
      h('h1', {}, kiosk.t('newChild.title')),
      h(
        'p',
        { className: 'field-hint' },
        kiosk.t('newChild.hint', { class: kiosk.index().classes.get(session.classId) ?? '' }),
      ),
      h(
        'form',
        {
          attrs: { novalidate: '' },
          onSubmit: (e) => void onSubmit(e),
          onInput: (e) => {
            message.textContent = '';
            // A field being corrected is no longer marked; the next attempt checks it again.
            if (e.target instanceof HTMLElement) e.target.removeAttribute('aria-invalid');
          },
        },
        field(kiosk.t('newChild.name'), inputs.displayName),
        field(kiosk.t('newChild.guardian'), inputs.guardianName),
        field(kiosk.t('newChild.phone'), inputs.phone),
        field(kiosk.t('newChild.allergies'), inputs.allergies),
        field(kiosk.t('newChild.specialNeeds'), inputs.specialNeeds),
        message,
        h(
          'div',
          { className: 'actions' },
          leaveButton(kiosk.t('newChild.cancel'), () => kiosk.show(deskScreen(session))),
          confirm,
        ),
      ),
      offer,
    );
  },
});
