/** The classes page's words for a status: the state, the action offered, a refusal in the office's words. */
import { expect } from 'chai';
import {
  isDeactivated,
  refusalText,
  statusAction,
  statusLabel,
} from '../../src/office/app/pages/activity.js';
import type { AdminT } from '../../src/office/app/pages/adminText.js';

// Says which text was chosen and with what, whatever the language.
const at: AdminT = (key, values = {}) =>
  Object.keys(values).length === 0 ? key : `${key} ${JSON.stringify(values)}`;

const refused = (details: Record<string, unknown>, status = 409) => ({
  status,
  json: { error: { code: 'CONFLICT', message: 'The nucleus still has active classes.', details } },
});

describe('office: the status of nuclei, classes and sessions', () => {
  it('an item without a status (an older server) is active; only DEACTIVATED is not', () => {
    expect([{}, { status: 'ACTIVE' }, { status: 'DEACTIVATED' }].map(isDeactivated)).to.deep.equal([
      false,
      false,
      true,
    ]);
    expect(statusLabel(at, { status: 'DEACTIVATED' })).to.equal('classes.inactive');
    expect(statusLabel(at, {})).to.equal('classes.active');
  });

  it('offers to deactivate what is active and to reactivate what is not, each at its own path', () => {
    expect(statusAction(at, '/api/v1/classes/c1', { status: 'ACTIVE' })).to.deep.equal({
      label: 'classes.deactivate',
      path: '/api/v1/classes/c1/deactivate',
      done: 'classes.deactivated',
    });
    expect(statusAction(at, '/api/v1/sessions/s1', { status: 'DEACTIVATED' })).to.deep.equal({
      label: 'classes.reactivate',
      path: '/api/v1/sessions/s1/reactivate',
      done: 'classes.reactivated',
    });
  });

  it('a nucleus refused for its active classes names them, by name where the page knows it', () => {
    const names = new Map([
      ['c1', 'Juniores'],
      ['c2', 'Berçário'],
    ]);
    expect(
      refusalText(at, refused({ reason: 'NUCLEUS_HAS_ACTIVE_CLASSES', classIds: ['c1', 'c2', 'c9'] }), names),
    ).to.equal('classes.NUCLEUS_HAS_ACTIVE_CLASSES {"classes":"Juniores, Berçário, c9"}');
  });

  it("each reason of the rule has the office's words; anything else is left to the server's message", () => {
    for (const reason of [
      'NUCLEUS_DEACTIVATED',
      'CLASS_DEACTIVATED',
      'ALREADY_DEACTIVATED',
      'ALREADY_ACTIVE',
    ])
      expect(refusalText(at, refused({ reason }), new Map())).to.equal(`classes.${reason} {"classes":""}`);
    expect(refusalText(at, refused({ reason: 'NUCLEUS_NAME_TAKEN' }), new Map())).to.equal(undefined);
    expect(refusalText(at, refused({ reason: 'CLASS_DEACTIVATED' }, 400), new Map())).to.equal(undefined);
    expect(refusalText(at, { status: 409, json: 'not an envelope' }, new Map())).to.equal(undefined);
  });
});
