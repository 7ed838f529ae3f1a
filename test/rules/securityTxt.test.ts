import { expect } from 'chai';
import { renderSecurityTxt, securityTxtExpiry } from '../../src/rules/securityTxt.js';

describe('security.txt', () => {
  const cases: ReadonlyArray<[string, string]> = [
    ['2026-11-25T10:20:30.456Z', '2027-11-25T10:20:30.000Z'],
    ['2026-12-31T23:59:59.999Z', '2027-12-31T23:59:59.000Z'],
    ['2028-02-29T12:00:00.000Z', '2029-02-28T12:00:00.000Z'],
  ];
  for (const [issued, expires] of cases) {
    it(`issued at ${issued} expires at ${expires}, never more than a year later`, () => {
      const expiry = securityTxtExpiry(new Date(issued));
      expect(expiry.toISOString()).to.equal(expires);
      expect(expiry.getTime() - Date.parse(issued)).to.be.at.most(366 * 86_400_000);
    });
  }

  it('renders two Contact lines, Expires and Preferred-Languages, one field a line', () => {
    const text = renderSecurityTxt(['mailto:a@x.org', 'mailto:b@x.org'], new Date('2026-11-25T00:00:00Z'));
    expect(text).to.equal(
      'Contact: mailto:a@x.org\nContact: mailto:b@x.org\nExpires: 2027-11-25T00:00:00Z\nPreferred-Languages: pt-BR, en\n',
    );
  });
});
