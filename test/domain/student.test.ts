import { Writable } from 'node:stream';
import { expect } from 'chai';
import { studentFieldClassification } from '../../src/domain/student.js';
import { buildOpenApiDocument } from '../../src/http/openapi/openApiDocument.js';
import { routes } from '../../src/http/registry.js';
import { createLogger } from '../../src/log/logger.js';

describe('student field classification', () => {
  const expected: ReadonlyArray<[string, string]> = [
    ['studentId', 'none'],
    ['displayName', 'personal'],
    ['photoRef', 'sensitive'],
    ['photo_refs', 'sensitive'],
    ['guardianName', 'personal'],
    ['guardianNameAlt', 'personal'],
    ['birthDate', 'personal'],
    ['phones', 'personal'],
    ['address', 'personal'],
    ['allergies', 'sensitive'],
    ['specialNeeds', 'sensitive'],
    ['classId', 'none'],
    ['nucleusId', 'none'],
    ['familyMembershipStatus', 'none'],
    ['imageConsentId', 'none'],
    ['status', 'none'],
    ['updatedAt', 'none'],
    ['deleted_justification', 'personal'],
  ];
  for (const [field, classification] of expected) {
    it(`${field} is ${classification}`, () =>
      expect(studentFieldClassification[field]).to.equal(classification));
  }

  it('the OpenAPI document shows each field with its classification', () => {
    const doc = buildOpenApiDocument(routes);
    expect(doc)
      .to.have.nested.property('components.schemas.Student.properties.allergies')
      .that.satisfies((v: unknown) => JSON.stringify(v).includes('"x-classification":"sensitive"'));
    expect(doc).to.have.nested.property(
      'components.schemas.Address.properties.city.x-classification',
      'personal',
    );
  });

  it('the logger redacts personal fields even if a call site logs a record by mistake', () => {
    let out = '';
    const sink = new Writable({
      write(chunk: Buffer, _e, done) {
        out += chunk.toString('utf8');
        done();
      },
    });
    createLogger('info', sink).info(
      { student: { displayName: 'João', allergies: 'Amendoim', classId: 'c-1' } },
      'oops',
    );
    expect(out).not.to.contain('João').and.not.to.contain('Amendoim');
    expect(out).to.contain('c-1');
  });
});
