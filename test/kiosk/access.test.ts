import { expect } from 'chai';
import { accessOf, mayEmergencyCheckout } from '../../src/kiosk/app/access.js';
import { photoUrl } from '../../src/kiosk/app/photo.js';

describe('kiosk: what a signed-in user may open', () => {
  const table: ReadonlyArray<[ReadonlyArray<string>, { desk: boolean; reports: boolean }]> = [
    [['ADMIN'], { desk: true, reports: true }],
    [['CHAMADOR'], { desk: true, reports: false }],
    [['RELATORIOS'], { desk: false, reports: true }],
    [['CADASTRO'], { desk: false, reports: false }],
    [['CHAMADOR', 'RELATORIOS'], { desk: true, reports: true }],
    [[], { desk: false, reports: false }],
    // A custom role's permissions are not in the login answer: offered, and the server judges.
    [['PORTEIRO'], { desk: true, reports: true }],
  ];
  for (const [roles, want] of table) {
    it(`${roles.join('+') || 'no role'}: desk ${want.desk}, reports ${want.reports}`, () => {
      expect(accessOf(roles)).to.deep.equal(want);
    });
  }

  it("follows the church's emergency policy, by the server's own rule", () => {
    expect(mayEmergencyCheckout(['CHAMADOR'], false)).to.equal(true);
    expect(mayEmergencyCheckout(['CHAMADOR'], true)).to.equal(false);
    expect(mayEmergencyCheckout(['ADMIN'], true)).to.equal(true);
    expect(mayEmergencyCheckout(['RELATORIOS'], false)).to.equal(false);
  });
});

describe("kiosk: a child's photo at the door", () => {
  const origin = 'https://chamada.example';
  it('shows a same-origin address', () => {
    expect(photoUrl('/photos/ana.jpg', origin)).to.equal('https://chamada.example/photos/ana.jpg');
    expect(photoUrl('https://chamada.example/p/1', origin)).to.equal('https://chamada.example/p/1');
  });
  it('shows nothing without a reference (no consent), for a bare key, or for another origin', () => {
    for (const ref of [
      null,
      '',
      'photos/ana.jpg',
      'https://evil.example/ana.jpg',
      '//evil.example/ana.jpg',
      '/\\evil.example/ana.jpg',
      'http://chamada.example/p/1',
      'data:image/png;base64,AAAA',
      'javascript:alert(1)',
    ]) {
      expect(photoUrl(ref, origin), String(ref)).to.equal(undefined);
    }
  });
});
