/** The pure rules of the student import: table tests, and the property that a re-import changes nothing. */
import { expect } from 'chai';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import type { StudentRecord } from '../../src/domain/student.js';
import {
  type ColumnMap,
  changesOf,
  decodeCsvText,
  detectDelimiter,
  type ImportedRow,
  mapColumns,
  matchableBy,
  normaliseBrazilianPhone,
  parseBirthDate,
  planImport,
  readRow,
} from '../../src/rules/studentImport.js';

const CLASS = { classId: '11111111-1111-4111-8111-111111111111', nucleusId: null };
const columnsOf = (headers: string[]): ColumnMap => {
  const m = mapColumns(headers, {});
  if (E.isLeft(m)) throw new Error(JSON.stringify(m.left));
  return m.right;
};

interface RowSpec {
  readonly name: string;
  readonly guardian: string;
  readonly birth?: string | undefined;
  readonly externalId: string | null;
  readonly allergies?: string | undefined;
}
/** A file's rows (from row 2) of the Maternal class, one per spec. */
const maternalRows = (specs: ReadonlyArray<RowSpec>): ImportedRow[] =>
  specs.map((s, i) => ({
    row: i + 2,
    externalId: s.externalId,
    className: 'Maternal',
    classKey: 'maternal',
    classRef: CLASS,
    fields: {
      displayName: s.name,
      guardianName: s.guardian,
      ...(s.birth === undefined ? {} : { birthDate: s.birth }),
      ...(s.allergies === undefined ? {} : { allergies: s.allergies }),
    },
  }));

describe('student import rules', () => {
  describe('normaliseBrazilianPhone', () => {
    const table: Array<[string, string]> = [
      ['(11) 98765-4321', '+5511987654321'],
      ['11 3456-7890', '+551134567890'],
      ['+55 (21) 99876-5432', '+5521998765432'],
      ['0055 21 99876 5432', '+5521998765432'],
      ['5511987654321', '+5511987654321'],
      ['011 98765-4321', '+5511987654321'],
      ['0 21 11 98765-4321', '+5511987654321'],
      ['+1 415 555 0100', '+14155550100'],
    ];
    for (const [input, expected] of table)
      it(`${input} → ${expected}`, () =>
        expect(normaliseBrazilianPhone(input)).to.deep.equal(E.right(expected)));
    for (const bad of ['98765-4321', '12345', '(10) 98765-4321', '(11) 88765-43210', 'abc'])
      it(`${bad} is refused`, () => expect(E.isLeft(normaliseBrazilianPhone(bad))).to.equal(true));
  });

  describe('parseBirthDate', () => {
    const today = '2026-03-01';
    const table: Array<[string, string | null]> = [
      ['05/03/2019', '2019-03-05'],
      ['5/3/2019', '2019-03-05'],
      ['05-03-2019', '2019-03-05'],
      ['05.03.2019', '2019-03-05'],
      ['2019-03-05', '2019-03-05'],
      ['31/02/2019', null],
      ['05/03/19', null],
      ['2027-01-01', null],
      ['01/01/1899', null],
      ['ontem', null],
    ];
    for (const [input, expected] of table)
      it(`${input} → ${expected ?? 'refused'}`, () => {
        const r = parseBirthDate(input, today);
        if (expected === null) expect(E.isLeft(r)).to.equal(true);
        else expect(r).to.deep.equal(E.right(expected));
      });
  });

  describe('decoding and delimiters', () => {
    it('drops a UTF-8 BOM', () =>
      expect(decodeCsvText(new TextEncoder().encode('\ufeffNome;Turma'))).to.equal('Nome;Turma'));
    it('reads bytes that are not UTF-8 as Windows-1252', () =>
      expect(decodeCsvText(Uint8Array.from([0x4a, 0x6f, 0xe3, 0x6f, 0x80, 0x93, 0x94]))).to.equal(
        'João€\u201c\u201d',
      ));
    it('picks ; when the header has more of them than commas, outside quotes', () => {
      expect(detectDelimiter('Nome;Responsável;Turma\nA,B;C')).to.equal(';');
      expect(detectDelimiter('"Nome; completo",Turma,Resp')).to.equal(',');
      expect(detectDelimiter('Nome\tTurma')).to.equal('\t');
    });
  });

  describe('mapColumns', () => {
    it('recognises Portuguese and English headers, accents and case ignored', () => {
      const m = columnsOf(['NOME DA CRIANÇA', 'responsavel', 'Class', 'Data_de_nascimento', 'Extra']);
      expect(m.columns.map((c) => c.field)).to.deep.equal([
        'displayName',
        'guardianName',
        'className',
        'birthDate',
        null,
      ]);
    });
    it('an explicit mapping wins, and a header the file lacks is an issue', () => {
      const m = mapColumns(['Kid', 'Nome', 'Turma'], { displayName: 'kid', guardianName: 'Nome' });
      expect(E.isRight(m) && m.right.byField).to.deep.equal({
        displayName: 0,
        guardianName: 1,
        className: 2,
      });
      const bad = mapColumns(['Nome', 'Responsável', 'Turma'], { externalId: 'Código' });
      expect(E.isLeft(bad) && bad.left.map((i) => i.path)).to.deep.equal(['query.column.externalId']);
    });
    it('a missing required column and two candidates for one field are issues', () => {
      const m = mapColumns(['Nome', 'Telefone', 'Celular'], {});
      expect(E.isLeft(m) && m.left.map((i) => i.path)).to.deep.equal([
        'body.header.phone',
        'body.header.guardianName',
        'body.header.className',
      ]);
    });
  });

  describe('readRow', () => {
    const columns = columnsOf(['Nome', 'Responsável', 'Turma', 'Telefone', 'Telefone 2', 'Rua', 'Cidade']);
    const ctx = {
      columns,
      classes: new Map([['maternal', CLASS]]),
      createClasses: false,
      today: '2026-03-01',
    };
    it('gives the fields of a good row, phones normalised, address from its parts', () => {
      const r = readRow(
        2,
        ['  Ana   Lima ', 'Rui', 'MATERNAL', '11987654321 / 1134567890', '', 'Rua A', 'Recife'],
        ctx,
      );
      expect(E.isRight(r) && r.right.fields).to.deep.equal({
        displayName: 'Ana Lima',
        guardianName: 'Rui',
        phones: [
          { number: '+5511987654321', qualifier: 'principal' },
          { number: '+551134567890', qualifier: 'principal' },
        ],
        address: { street: 'Rua A', city: 'Recife' },
      });
    });
    it('reports every error of a row, each with its column', () => {
      const r = readRow(7, ['', 'x'.repeat(121), 'Jardim', '123', '', '', ''], ctx);
      expect(E.isLeft(r) && r.left.map((e) => [e.row, e.column, e.code])).to.deep.equal([
        [7, 'Nome', 'REQUIRED'],
        [7, 'Responsável', 'INVALID_VALUE'],
        [7, 'Telefone', 'INVALID_PHONE'],
        [7, 'Turma', 'UNKNOWN_CLASS'],
      ]);
    });
    it('a row with another number of cells is one error of the row', () => {
      const r = readRow(3, ['Ana', 'Rui'], ctx);
      expect(E.isLeft(r) && r.left.map((e) => [e.column, e.code])).to.deep.equal([
        [null, 'WRONG_COLUMN_COUNT'],
      ]);
    });
    it('an unknown class is accepted, to be created, when the import may create classes', () => {
      const r = readRow(2, ['Ana', 'Rui', 'Jardim', '', '', '', ''], { ...ctx, createClasses: true });
      expect(E.isRight(r) && r.right.classRef).to.equal(null);
    });
  });

  describe('planImport', () => {
    const row = (n: number, name: string, extra: Partial<ImportedRow> = {}): ImportedRow => ({
      row: n,
      externalId: null,
      className: 'Maternal',
      classKey: 'maternal',
      classRef: CLASS,
      fields: { displayName: name, guardianName: 'Rui' },
      ...extra,
    });
    const idFor = (key: string) => `id:${key}`;
    const classIdOf = () => CLASS.classId;
    it('a second row of the same child is a DUPLICATE_ROW error', () => {
      const plan = planImport([row(2, 'Ana'), row(3, 'ANA')], [], idFor, classIdOf);
      expect(plan.planned.map((p) => p.action)).to.deep.equal(['create']);
      expect(plan.errors.map((e) => [e.row, e.code])).to.deep.equal([[3, 'DUPLICATE_ROW']]);
    });
    it('a deleted student is not matched', () => {
      const deleted = storedFrom(row(2, 'Ana'), 'x', 'DELETED');
      expect(planImport([row(2, 'Ana')], [deleted], idFor, classIdOf).planned[0]?.action).to.equal('create');
    });
  });

  const storedFrom = (
    r: ImportedRow,
    studentId: string,
    status: 'ACTIVE' | 'DELETED' = 'ACTIVE',
  ): StudentRecord => ({
    studentId,
    displayName: r.fields.displayName,
    photoRef: null,
    photo_refs: [],
    guardianName: r.fields.guardianName,
    guardianNameAlt: r.fields.guardianNameAlt ?? null,
    birthDate: r.fields.birthDate ?? null,
    phones: r.fields.phones ?? [],
    address: r.fields.address ?? null,
    allergies: r.fields.allergies ?? null,
    specialNeeds: r.fields.specialNeeds ?? null,
    classId: r.classRef?.classId ?? 'none',
    nucleusId: null,
    familyMembershipStatus: r.fields.familyMembershipStatus ?? null,
    imageConsentId: null,
    visitor: false,
    status,
    createdAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-01T00:00:00Z',
    deleted_justification: null,
  });

  it('property: importing a file, storing its plan and importing it again changes nothing', () => {
    const name = fc.constantFrom('Ana', 'Bia', 'Caio', 'Davi', 'Édson', 'edson', 'Fábio Lima');
    const arbRow = fc.record({
      name,
      guardian: fc.constantFrom('Rui', 'Lia', 'Rúi'),
      birth: fc.option(fc.constantFrom('2019-01-02', '2020-05-06'), { nil: undefined }),
      externalId: fc.option(fc.constantFrom('A1', 'A2', 'a1', 'B7'), { nil: null }),
      allergies: fc.option(fc.constantFrom('leite', 'ovo'), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(arbRow, { maxLength: 12 }), (specs) => {
        const rows = maternalRows(specs);
        const idFor = (key: string) => `id:${key}`;
        const classIdOf = () => CLASS.classId;
        const first = planImport(rows, [], idFor, classIdOf);
        // Store what the first import does: creations as records, updates applied.
        const register = new Map<string, StudentRecord>();
        for (const p of first.planned) {
          if (p.action === 'create') register.set(p.studentId, storedFrom(p.row, p.studentId));
        }
        const second = planImport(rows, [...register.values()], idFor, classIdOf);
        expect(second.planned.every((p) => p.action === 'unchanged')).to.equal(true);
        expect(second.planned.length).to.equal(first.planned.length);
        expect(second.errors).to.deep.equal(first.errors);
        for (const p of second.planned)
          expect(
            changesOf(register.get(p.studentId) ?? storedFrom(p.row, 'x'), p.row, CLASS.classId),
          ).to.deep.equal({});
      }),
    );
  });

  it('property: planning with only the records matchableBy keeps plans exactly as with the whole roll', () => {
    const name = fc.constantFrom('Ana', 'Bia', 'Caio', 'Édson', 'edson');
    const guardian = fc.constantFrom('Rui', 'Lia', 'Rúi');
    const birth = fc.option(fc.constantFrom('2019-01-02', '2020-05-06'), { nil: undefined });
    const externalId = fc.option(fc.constantFrom('A1', 'a1', 'B7'), { nil: null });
    const arbRow = fc.record({ name, guardian, birth, externalId });
    // Stored records: some under a row's derived id, some sharing only a natural key, some deleted,
    // some matching nothing; several may share a natural key (the first in the roll's order wins).
    const arbStored = fc.record({
      name,
      guardian,
      birth,
      id: fc.constantFrom('id:x:a1', 'id:x:b7', 'id:n:ana', 'other-1', 'other-2', 'other-3'),
      deleted: fc.boolean(),
      allergies: fc.option(fc.constantFrom('leite', 'ovo'), { nil: undefined }),
    });
    fc.assert(
      fc.property(
        fc.array(arbRow, { maxLength: 8 }),
        fc.array(arbStored, { maxLength: 10 }),
        (specs, stored) => {
          const rows = maternalRows(specs);
          const seen = new Set<string>();
          const roll = stored.flatMap((s, i): StudentRecord[] => {
            // Ids are unique in a store.
            const id = seen.has(s.id) ? `${s.id}-${i}` : s.id;
            seen.add(id);
            const fields = {
              displayName: s.name,
              guardianName: s.guardian,
              ...(s.birth === undefined ? {} : { birthDate: s.birth }),
              ...(s.allergies === undefined ? {} : { allergies: s.allergies }),
            };
            const r: ImportedRow = {
              row: 0,
              externalId: null,
              className: '',
              classKey: '',
              classRef: CLASS,
              fields,
            };
            return [storedFrom(r, id, s.deleted ? 'DELETED' : 'ACTIVE')];
          });
          const idFor = (key: string) => `id:${key}`;
          const classIdOf = () => CLASS.classId;
          const kept = roll.filter(matchableBy(rows, idFor));
          expect(planImport(rows, kept, idFor, classIdOf)).to.deep.equal(
            planImport(rows, roll, idFor, classIdOf),
          );
        },
      ),
    );
  });

  it("matchableBy keeps the records of a row's id or natural key, active ones only", () => {
    const r: ImportedRow = {
      row: 2,
      externalId: 'A1',
      className: 'Maternal',
      classKey: 'maternal',
      classRef: CLASS,
      fields: { displayName: 'Ana Lima', guardianName: 'Rui', birthDate: '2019-01-02' },
    };
    const mayMatch = matchableBy([r], (key) => `id:${key}`);
    const table: Array<[string, StudentRecord, boolean]> = [
      [
        'its derived id',
        storedFrom({ ...r, fields: { displayName: 'Outra', guardianName: 'X' } }, 'id:x:a1'),
        true,
      ],
      [
        'its natural key, folded',
        storedFrom({ ...r, fields: { ...r.fields, displayName: 'ANA  Líma' } }, 'z'),
        true,
      ],
      [
        'another birth date',
        storedFrom({ ...r, fields: { ...r.fields, birthDate: '2019-01-03' } }, 'z'),
        false,
      ],
      ['its id but deleted', storedFrom(r, 'id:x:a1', 'DELETED'), false],
    ];
    for (const [what, record, expected] of table) expect(mayMatch(record), what).to.equal(expected);
  });
});
