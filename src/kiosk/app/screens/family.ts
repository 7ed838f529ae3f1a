/**
 * A family opened from its pass or a phone lookup (decision 0052): every child who has a session now
 * (their own class's, `familyCheckIn.ts`) is ticked; one tap checks them all in through the desk's own
 * path (the admission rule judges each, the events go to the outbox, offline too), then one label per
 * child and one guardian's stub. Children with no session now are shown unticked with why; a family
 * with nobody to check in now says so and records nothing.
 *
 * In self-service mode the refusal of a room rule only says why (the tablet's signed-in ADMIN is not
 * the person at the screen, so no override is offered), and "done" goes back to the start.
 */

import { h, leaveButton, submitOnce } from '../../../client/dom.js';
import { openCheckin } from '../checkinState.js';
import { type FamilyRow, familyRows, nobodyToCheckIn } from '../familyCheckIn.js';
import type { Kiosk, Screen } from '../kiosk.js';
import { type ChildChoice, checkInTogether, childTicks } from './childTicks.js';
import { labelScreen } from './label.js';
import { type Drawn, refreshingScreen } from './refreshingScreen.js';
import type { OpenFamily } from './scanOverlay.js';

/** Where a family was opened from: the desk (a volunteer) or self-service (the family itself). */
export interface FamilyOrigin {
  readonly selfService: boolean;
  /** The screen "back", "done" and a timeout return to. */
  readonly back: () => Screen;
}

const rowsNow = (kiosk: Kiosk, familyKey: string): FamilyRow[] | undefined => {
  const family = kiosk.index().families.get(familyKey);
  return family === undefined
    ? undefined
    : familyRows(
        kiosk.index(),
        family,
        new Date(),
        (sessionId, studentId) => openCheckin(kiosk.aspect(sessionId, studentId)) !== undefined,
      );
};

/**
 * What a scanned pass opens (the scan overlay's `OpenFamily`, 0053): the family's screen, or, when no
 * child of the family has a session of their class now, the words the overlay shows while it keeps
 * looking (nothing recorded). A family whose children are all inside already opens, and says so.
 */
export const openFamilyFrom =
  (kiosk: Kiosk, origin: FamilyOrigin): OpenFamily =>
  (family) => {
    const rows = rowsNow(kiosk, family.familyKey) ?? [];
    if (rows.every((r) => r.why === 'NO_SESSION'))
      return kiosk.t('scan.noSession', { name: family.guardianName });
    kiosk.show(familyScreen(family.familyKey, origin));
    return undefined;
  };

export const familyScreen = (familyKey: string, origin: FamilyOrigin): Screen =>
  refreshingScreen('family', (kiosk) => renderFamily(kiosk, familyKey, origin));

const renderFamily = (kiosk: Kiosk, familyKey: string, origin: FamilyOrigin): Drawn => {
  const family = kiosk.index().families.get(familyKey);
  const rows = rowsNow(kiosk, familyKey) ?? [];
  const back = leaveButton(kiosk.t('family.back'), () => kiosk.show(origin.back()));
  if (family === undefined || rows.length === 0) {
    return {
      element: h(
        'section',
        { className: 'family' },
        h('h1', {}, kiosk.t('family.unknownTitle')),
        h('p', { className: 'notice', attrs: { role: 'alert' } }, kiosk.t('family.unknown')),
        h('div', { className: 'actions' }, back),
      ),
      refresh: () => undefined,
    };
  }
  const whyText = (r: FamilyRow): string =>
    r.why === 'NO_SESSION'
      ? kiosk.t('family.noSession')
      : r.why === 'INSIDE'
        ? kiosk.t('siblings.inside')
        : '';
  const choices = (now: ReadonlyArray<FamilyRow>): ChildChoice[] =>
    now.map((r) => ({ student: r.student, open: r.ticked, status: whyText(r) }));
  const ticks = childTicks(kiosk, 'family-child', choices(rows));
  const nobody = h(
    'p',
    { className: 'notice', attrs: { role: 'status', 'data-test': 'family-nobody' } },
    nobodyToCheckIn(rows) ? kiosk.t('family.nobodyNow') : '',
  );
  const message = h('p', { className: 'form-error', attrs: { role: 'alert' } });
  const offer = h('div', { className: 'offer' });
  const confirm = h(
    'button',
    { className: 'primary big', attrs: { type: 'submit', 'data-test': 'family-confirm' } },
    kiosk.t('family.confirm'),
  );
  confirm.hidden = nobodyToCheckIn(rows);

  /** A pull while the family waits: ticks stay, a child who can no longer go in is unticked. */
  const refresh = (): void => {
    const now = rowsNow(kiosk, familyKey) ?? [];
    ticks.refresh(choices(now));
    nobody.textContent = nobodyToCheckIn(now) ? kiosk.t('family.nobodyNow') : '';
    confirm.hidden = nobodyToCheckIn(now);
  };

  const attempt = (): Promise<string | undefined> =>
    checkInTogether(
      kiosk,
      offer,
      (rowsNow(kiosk, familyKey) ?? []).flatMap((r) =>
        r.ticked && r.session !== undefined && ticks.ticked(r.student.studentId)
          ? [{ student: r.student, session: r.session }]
          : [],
      ),
      {
        selfService: origin.selfService,
        recorded: ({ labelled, checkedInAt }) => {
          const first = labelled[0];
          if (first === undefined) return kiosk.t('siblings.noneChosen');
          kiosk.show(
            labelScreen({ children: labelled, checkedInAt, desk: first.session, done: origin.back }),
          );
          return undefined;
        },
      },
    );

  const onSubmit = submitOnce(confirm, message, attempt);
  const element = h(
    'section',
    { className: `family${origin.selfService ? ' self' : ''}` },
    h('h1', {}, kiosk.t('family.title', { name: family.guardianName })),
    h(
      'form',
      { onSubmit: (e) => void onSubmit(e) },
      ticks.element,
      nobody,
      message,
      offer,
      h('div', { className: 'actions' }, back, confirm),
    ),
  );
  return { element, refresh };
};
