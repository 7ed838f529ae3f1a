/** The desk's admission: the facts a tablet judges a check-in by, and what it says of a refusal. */
import { expect } from 'chai';
import {
  type DeskRefusal,
  type DeskSituation,
  deskFacts,
  refusalText,
} from '../../src/kiosk/app/admission.js';
import { decideAdmission, type PolicyRefusal } from '../../src/rules/admission.js';

const record = {
  birthMonth: '2019-03',
  guardianPhone: true,
  allergiesAnswered: true,
  specialNeedsAnswered: false,
  imageConsentAnswered: false,
};
const desk: DeskSituation = {
  index: {
    rooms: new Map([
      ['c1', { capacity: 10, childrenPerVolunteer: 5, ageRange: { minMonths: 36, maxMonths: 71 } }],
    ]),
    requiredFields: ['specialNeeds', 'imageConsent'],
    deactivatedClasses: new Set(['c9']),
  },
  session: { classId: 'c1', date: '2026-11-29', volunteers: 1 },
  student: { visitor: false, admission: record },
  checkedIn: 4,
  checkins: [{ checkInId: 'k0', status: 'CHECKED_OUT' }],
  actorRoles: ['CHAMADOR'],
};

describe('kiosk: the facts the desk judges a check-in by', () => {
  it("are the roster's room, volunteers, required fields and record, with the tablet's own count", () => {
    expect(deskFacts(desk)).to.deep.equal({
      student: { deleted: false, visitor: false, record },
      session: { date: '2026-11-29', active: true, classActive: true },
      room: { capacity: 10, childrenPerVolunteer: 5, ageRange: { minMonths: 36, maxMonths: 71 } },
      occupancy: { checkedIn: 4, volunteers: 1 },
      checkins: [{ checkInId: 'k0', status: 'CHECKED_OUT' }],
      requiredFields: ['specialNeeds', 'imageConsent'],
      actorRoles: ['CHAMADOR'],
    });
  });

  it('a roster from an older server (no record facts, no count) holds nothing against the child', () => {
    const facts = deskFacts({
      ...desk,
      index: { rooms: new Map(), requiredFields: [], deactivatedClasses: new Set() },
      session: { classId: 'c1', date: '2026-11-29' },
      student: { visitor: false },
    });
    expect(decideAdmission({ checkInId: 'c' }, facts).kind).to.equal('ADMIT');
    expect(facts.occupancy).to.deep.equal({ checkedIn: 4, volunteers: 0 });
  });

  it('a session the roster marks deactivated, or one of a deactivated class, is closed to every check-in', () => {
    const closed = deskFacts({ ...desk, session: { ...desk.session, active: false } });
    expect(closed.session).to.deep.equal({ date: '2026-11-29', active: false, classActive: true });
    expect(decideAdmission({ checkInId: 'c' }, closed)).to.deep.equal({
      kind: 'REFUSE',
      refusal: { reason: 'SESSION_DEACTIVATED' },
    });
    const ofClosedClass = deskFacts({ ...desk, session: { ...desk.session, classId: 'c9' } });
    expect(ofClosedClass.session).to.deep.equal({ date: '2026-11-29', active: true, classActive: false });
    expect(decideAdmission({ checkInId: 'c' }, { ...ofClosedClass, actorRoles: ['ADMIN'] })).to.deep.equal({
      kind: 'REFUSE',
      refusal: { reason: 'CLASS_DEACTIVATED' },
    });
  });

  it('a first-time visitor about to be registered is judged by the room only', () => {
    const facts = deskFacts({ ...desk, student: 'NEW_VISITOR', checkins: [] });
    expect(facts.student).to.deep.include({ visitor: true, deleted: false });
    expect(decideAdmission({ checkInId: 'c' }, facts)).to.deep.include({ kind: 'ADMIT' });
    expect(
      decideAdmission({ checkInId: 'c' }, { ...facts, occupancy: { checkedIn: 10, volunteers: 3 } }),
    ).to.deep.include({
      kind: 'REFUSE',
      refusal: { reason: 'ROOM_FULL', checkedIn: 10, capacity: 10 },
    });
  });
});

describe('kiosk: what the desk says of a refusal, in both languages', () => {
  const chamador = (refusal: PolicyRefusal): DeskRefusal => ({ kind: 'REFUSE', refusal, overridable: false });
  const admin = (refusal: PolicyRefusal): DeskRefusal => ({ kind: 'REFUSE', refusal, overridable: true });
  const cases: ReadonlyArray<readonly [string, DeskRefusal, string, string]> = [
    [
      'a full room, with the count and the capacity, to a CHAMADOR',
      chamador({ reason: 'ROOM_FULL', checkedIn: 12, capacity: 12 }),
      'Sala cheia (12/12). Só um administrador pode dar entrada mesmo assim.',
      'The room is full (12/12). Only an administrator may check the child in all the same.',
    ],
    [
      'a full room to an ADMIN, who is offered the override instead',
      admin({ reason: 'ROOM_FULL', checkedIn: 12, capacity: 12 }),
      'Sala cheia (12/12).',
      'The room is full (12/12).',
    ],
    [
      'too few volunteers: check one in first',
      admin({ reason: 'RATIO_EXCEEDED', checkedIn: 5, volunteers: 1, childrenPerVolunteer: 5 }),
      'Faltam voluntários na sala: 5 criança(s) para 1 voluntário(s), até 5 por voluntário. Registre a entrada de um voluntário primeiro.',
      'Not enough volunteers in the room: 5 child(ren) for 1 volunteer(s), at most 5 each. Check a volunteer in first.',
    ],
    [
      "an age outside the class's range, both in years and months",
      admin({ reason: 'AGE_OUT_OF_RANGE', ageMonths: 86, ageRange: { minMonths: 36, maxMonths: 71 } }),
      'Ana tem 7 anos e 2 meses, fora da faixa etária da turma (de 3 anos a 5 anos e 11 meses).',
      "Ana is 7 years and 2 months old, outside the class's ages (from 3 years to 5 years and 11 months).",
    ],
    [
      'an age outside a range of birth months',
      admin({ reason: 'AGE_OUT_OF_RANGE', ageMonths: 13, ageRange: { bornUntil: '2024-12' } }),
      'Ana tem 1 ano e 1 mês, fora da faixa etária da turma (nascidos até dezembro de 2024).',
      "Ana is 1 year and 1 month old, outside the class's ages (born up to December 2024).",
    ],
    [
      'an incomplete record, naming the missing fields in plain words',
      admin({ reason: 'RECORD_INCOMPLETE', missing: ['birthDate', 'guardianPhone', 'imageConsent'] }),
      'O cadastro de Ana está incompleto: falta a data de nascimento, o telefone do responsável e a resposta sobre o uso de imagem.',
      "Ana's record is incomplete: it lacks the date of birth, the guardian's phone, and the answer about image use.",
    ],
    [
      'a deactivated session: no check-in, and check-out still works',
      { kind: 'REFUSE', refusal: { reason: 'SESSION_DEACTIVATED' } },
      'Ana não pode dar entrada: esta sessão foi desativada. A saída continua possível.',
      'Ana cannot be checked in: this session was deactivated. Check-out still works.',
    ],
    [
      'a session of a deactivated class says the same',
      { kind: 'REFUSE', refusal: { reason: 'CLASS_DEACTIVATED' } },
      'Ana não pode dar entrada: esta sessão foi desativada. A saída continua possível.',
      'Ana cannot be checked in: this session was deactivated. Check-out still works.',
    ],
    [
      'a child already in the room, as before',
      { kind: 'REFUSE', refusal: { reason: 'ALREADY_CHECKED_IN' } },
      'Ana já está presente.',
      'Ana is already checked in.',
    ],
  ];
  for (const [what, refusal, pt, en] of cases)
    it(what, () => {
      expect(refusalText('pt-BR', [{ refusal, name: 'Ana' }])).to.equal(pt);
      expect(refusalText('en', [{ refusal, name: 'Ana' }])).to.equal(en);
    });

  it('siblings refused together: each reason, and the administrator line once', () => {
    const full = (n: number) => chamador({ reason: 'ROOM_FULL', checkedIn: n, capacity: 2 });
    expect(
      refusalText('en', [
        { refusal: full(2), name: 'Ana' },
        { refusal: full(3), name: 'Bia' },
      ]),
    ).to.equal(
      'Ana: The room is full (2/2). Bia: The room is full (3/2). Only an administrator may check the child in all the same.',
    );
  });
});
