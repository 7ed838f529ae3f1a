/**
 * A check-in the admission rule refused, as the desk, the siblings and the new-child screens show it:
 * the reason, and for an ADMIN the offer to check in all the same with a justification (10 to 500
 * characters, as the server takes it), which the CHECK_IN event carries to the server and its audit.
 * The button stays disabled until the justification is long enough, so nothing is recorded without one.
 */
import { field, h } from '../../../client/dom.js';
import type { Kiosk } from '../kiosk.js';
import { JUSTIFICATION_MAX, JUSTIFICATION_MIN } from './emergency.js';

export const refusalPanel = (
  kiosk: Kiosk,
  text: string,
  /** Absent: this actor may not override; the panel only says why. */
  onOverride?: (justification: string) => Promise<string | undefined>,
  /** What else may lift the refusal (a volunteer checking in to the room), offered first. */
  action?: HTMLElement,
): HTMLElement => {
  const message = h('p', { className: 'form-error', attrs: { role: 'alert' } }, text);
  if (onOverride === undefined)
    return h('div', { className: 'admission-refusal', attrs: { 'data-test': 'refusal' } }, message, action);
  const hintId = `override-hint-${crypto.randomUUID()}`;
  let busy = false;
  const justification = h('textarea', {
    className: 'justification',
    attrs: {
      name: 'overrideJustification',
      rows: '3',
      minlength: String(JUSTIFICATION_MIN),
      maxlength: String(JUSTIFICATION_MAX),
      required: '',
      'aria-describedby': hintId,
    },
    onInput: () => {
      confirm.disabled = busy || !longEnough();
    },
  });
  const longEnough = () => {
    const n = justification.value.trim().length;
    return n >= JUSTIFICATION_MIN && n <= JUSTIFICATION_MAX;
  };
  const override = async () => {
    if (busy || !longEnough()) return;
    busy = true;
    confirm.disabled = true;
    try {
      const problem = await onOverride(justification.value.trim());
      if (problem !== undefined) message.textContent = problem;
    } finally {
      busy = false;
      confirm.disabled = !longEnough();
    }
  };
  const confirm = h(
    'button',
    {
      className: 'danger-outline',
      attrs: { type: 'button', disabled: '', 'data-test': 'override' },
      onClick: () => void override(),
    },
    kiosk.t('admission.override'),
  );
  queueMicrotask(() => justification.focus());
  return h(
    'div',
    { className: 'admission-refusal', attrs: { 'data-test': 'refusal' } },
    message,
    action,
    field(kiosk.t('admission.justification'), justification),
    h('p', { className: 'field-hint', attrs: { id: hintId } }, kiosk.t('admission.justificationHint')),
    confirm,
  );
};
