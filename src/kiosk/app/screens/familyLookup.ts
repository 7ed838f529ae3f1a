/**
 * The phone lookup (decision 0052): the last four digits of a guardian's phone, the families they name
 * on this tablet's roster (several may share them), each shown by the guardian's and the children's
 * first names; one tap opens the family. Offline like the rest: the roster holds the four digits,
 * never the number (0018).
 */
import { h, leaveButton, replaceChildren } from '../../../client/dom.js';
import { LOOKUP_DIGITS, lookupDigits, lookupFamilies, throttleLookup } from '../familyCheckIn.js';
import type { Kiosk, Screen } from '../kiosk.js';
import { type FamilyOrigin, familyScreen } from './family.js';

/** When this tablet answered its recent self-service lookups (kept across screens, not restarts). */
let selfLookupsMs: ReadonlyArray<number> = [];

export const familyLookupScreen = (origin: FamilyOrigin): Screen => {
  let typed = '';
  /** The four digits last answered, so a roster pull redrawing the list is not another lookup. */
  let answered: string | undefined;
  let results: HTMLElement | undefined;
  /** Self-service answers a few lookups a minute: nobody walks every ending for the families' names. */
  const mayAnswer = (digits: string | undefined): boolean => {
    if (!origin.selfService || digits === undefined || digits === answered) return true;
    const throttled = throttleLookup(selfLookupsMs, Date.now());
    selfLookupsMs = throttled.recentMs;
    if (throttled.answered) answered = digits;
    return throttled.answered;
  };
  const drawResults = (kiosk: Kiosk) => {
    if (results === undefined) return;
    if (!mayAnswer(lookupDigits(typed))) {
      replaceChildren(
        results,
        h('p', { className: 'notice', attrs: { role: 'alert' } }, kiosk.t('lookup.wait')),
      );
      return;
    }
    const found = lookupFamilies(kiosk.index(), typed);
    if (found.length === 0) {
      replaceChildren(
        results,
        lookupDigits(typed) === undefined ? null : h('p', { className: 'notice' }, kiosk.t('lookup.none')),
      );
      return;
    }
    replaceChildren(
      results,
      h(
        'ul',
        { className: 'family-matches', attrs: { 'aria-label': kiosk.t('lookup.results') } },
        ...found.map((f) =>
          h(
            'li',
            {},
            h(
              'button',
              {
                className: 'family-match',
                attrs: { type: 'button', 'data-family-key': f.familyKey },
                onClick: () => kiosk.show(familyScreen(f.familyKey, origin)),
              },
              h('span', { className: 'family-guardian' }, kiosk.t('lookup.family', { name: f.guardianName })),
              h('span', { className: 'family-children' }, f.children.join(', ')),
            ),
          ),
        ),
      ),
    );
  };
  return {
    name: 'family-lookup',
    render(kiosk) {
      const hintId = 'lookup-hint';
      const input = h('input', {
        className: 'lookup-digits',
        attrs: {
          type: 'text',
          name: 'phoneDigits',
          inputmode: 'numeric',
          autocomplete: 'off',
          maxlength: String(LOOKUP_DIGITS + 4),
          'aria-describedby': hintId,
        },
        onInput: () => {
          typed = input.value;
          drawResults(kiosk);
        },
      });
      input.value = typed;
      results = h('div', { className: 'lookup-results', attrs: { 'aria-live': 'polite' } });
      drawResults(kiosk);
      queueMicrotask(() => input.focus());
      return h(
        'section',
        { className: `lookup${origin.selfService ? ' self' : ''}` },
        h('h1', {}, kiosk.t('lookup.title')),
        h(
          'label',
          { className: 'field' },
          h('span', { className: 'field-label' }, kiosk.t('lookup.digits')),
          input,
        ),
        h('p', { className: 'field-hint', attrs: { id: hintId } }, kiosk.t('lookup.hint')),
        results,
        h(
          'div',
          { className: 'actions' },
          leaveButton(kiosk.t('family.back'), () => kiosk.show(origin.back())),
        ),
      );
    },
    // A pull while the guardian types: the list is read again, what is typed stays.
    update: drawResults,
  };
};
