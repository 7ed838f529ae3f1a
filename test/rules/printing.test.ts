import { expect } from 'chai';
import fc from 'fast-check';
import { LABEL_PAGES, PRINTER_LAYOUTS, type PrinterLayout } from '../../src/domain/labelLayouts.js';
import { printerAddress } from '../../src/domain/printing.js';
import {
  type LabelledChild,
  labelsOf,
  layOut,
  type Measure,
  PT_PER_MM,
  wrap,
} from '../../src/rules/labels.js';
import { printerIssues } from '../../src/rules/printers.js';
import { type AfterFailure, afterFailure } from '../../src/rules/printRetry.js';
import { zplField, zplOf } from '../../src/rules/zpl.js';

/** Every character half its size wide: enough to test wrapping without a font. */
const halfEm: Measure = (text, sizePt) => text.length * sizePt * 0.5;

const child = (over: Partial<LabelledChild> = {}): LabelledChild => ({
  displayName: 'Ana Souza',
  className: 'Berçário',
  sessionTitle: 'Culto',
  allergies: null,
  specialNeeds: null,
  code: 'K7Q2',
  ...over,
});

describe('printerAddress and printerIssues (a printer that holds together)', () => {
  const addresses: ReadonlyArray<[string, ReturnType<typeof printerAddress>]> = [
    [
      'ipp://printer.local/ipp/print',
      { scheme: 'ipp', host: 'printer.local', port: 631, path: '/ipp/print' },
    ],
    [
      'ipps://Printer.Local:8631/ipp/print',
      { scheme: 'ipps', host: 'printer.local', port: 8631, path: '/ipp/print' },
    ],
    ['tcp://192.0.2.10', { scheme: 'tcp', host: '192.0.2.10', port: 9100, path: '/' }],
    ['tcp://[2001:db8::1]:9101', { scheme: 'tcp', host: '2001:db8::1', port: 9101, path: '/' }],
    ['http://printer.local:631/ipp/print', undefined],
    ['ipp://user:secret@printer.local/ipp/print', undefined],
    ['ipp://printer.local/ipp/print?x=1', undefined],
    ['tcp://printer.local:9100/some/path', undefined],
    ['printer.local:9100', undefined],
  ];
  for (const [uri, expected] of addresses) {
    it(`${uri} is ${expected === undefined ? 'not a printer URI' : `${expected.scheme} on ${expected.host}:${expected.port}`}`, () => {
      expect(printerAddress(uri)).to.deep.equal(expected);
    });
  }

  const table: ReadonlyArray<[string, 'ipp' | 'zpl', string, ReadonlyArray<string>, number]> = [
    ['an IPP printer on ipp:// holds together', 'ipp', 'ipp://p.local/ipp/print', [], 0],
    ['an IPP printer on ipps:// holds together', 'ipp', 'ipps://p.local/ipp/print', [], 0],
    ['a ZPL printer on tcp:// holds together', 'zpl', 'tcp://p.local:9100', [], 0],
    ['an IPP printer on tcp:// does not', 'ipp', 'tcp://p.local:9100', [], 1],
    ['a ZPL printer on ipp:// does not', 'zpl', 'ipp://p.local/ipp/print', [], 1],
    ['a host PRINTER_HOSTS lists is allowed', 'zpl', 'tcp://P.local', ['p.local'], 0],
    ['a host PRINTER_HOSTS does not list is refused', 'zpl', 'tcp://other.local', ['p.local'], 1],
    ['both faults are reported at once', 'ipp', 'tcp://other.local', ['p.local'], 2],
  ];
  for (const [name, protocol, uri, hosts, issues] of table) {
    it(name, () => {
      const found = printerIssues({ protocol, uri }, hosts);
      expect(found).to.have.length(issues);
      for (const issue of found) expect(issue.path).to.equal('body.uri');
    });
  }
});

describe('afterFailure (bounded retries)', () => {
  const T = 1_000_000;
  const table: ReadonlyArray<[string, Parameters<typeof afterFailure>, AfterFailure]> = [
    [
      'an unreachable printer is tried again after 1 s',
      ['PRINTER_UNREACHABLE', 1, T, T + 60_000],
      { retry: true, at: T + 1_000 },
    ],
    ['the wait doubles', ['PRINTER_TIMEOUT', 3, T, T + 60_000], { retry: true, at: T + 4_000 }],
    [
      'the wait stops growing at 10 s',
      ['PRINTER_BAD_ANSWER', 9, T, T + 60_000],
      { retry: true, at: T + 10_000 },
    ],
    ['a busy printer is tried again', ['PRINTER_BUSY', 1, T, T + 60_000], { retry: true, at: T + 1_000 }],
    [
      'no attempt starts at or after the give-up instant',
      ['PRINTER_UNREACHABLE', 4, T, T + 8_000],
      { retry: false },
    ],
    [
      'nor one that could not run a second before it',
      ['PRINTER_UNREACHABLE', 1, T, T + 1_500],
      { retry: false },
    ],
    [
      'a printer that refused the job is not asked again',
      ['PRINTER_REFUSED', 1, T, T + 60_000],
      { retry: false },
    ],
    ['nor one that takes none of our formats', ['PRINTER_NO_FORMAT', 1, T, T + 60_000], { retry: false }],
    ['nor a job with nothing to print', ['NOTHING_TO_PRINT', 1, T, T + 60_000], { retry: false }],
  ];
  for (const [name, args, expected] of table) {
    it(name, () => expect(afterFailure(...args)).to.deep.equal(expected));
  }

  it('never schedules an attempt past the give-up instant, whatever the attempt count', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 120_000 }), (attempts, left) => {
        const next = afterFailure('PRINTER_UNREACHABLE', attempts, T, T + left);
        return !next.retry || (next.at > T && next.at + 1_000 <= T + left);
      }),
    );
  });
});

describe('labelsOf and layOut (what a label holds, placed on its page)', () => {
  it('one label per child and one stub listing every child with their code', () => {
    const labels = labelsOf(
      [child(), child({ displayName: 'Bruno Souza', code: 'M3X9' })],
      '26/11/2026 10:05',
      'pt-BR',
    );
    expect(labels.map((l) => l.kind)).to.deep.equal(['child', 'child', 'stub']);
    const stub = labels[2];
    expect(stub?.lines.filter((l) => l.role === 'stubChild').map((l) => [l.text, l.aside])).to.deep.equal([
      ['Ana Souza', 'K7Q2'],
      ['Bruno Souza', 'M3X9'],
    ]);
  });

  it("a child's label has the allergy alert and care notes only when the record has them, in the printer's language", () => {
    const [withBoth] = labelsOf([child({ allergies: 'amendoim', specialNeeds: 'asma' })], 'x', 'en');
    expect(withBoth?.lines.map((l) => l.text)).to.include.members([
      'ALLERGY: amendoim',
      'Care: asma',
      'K7Q2',
    ]);
    const [plain] = labelsOf([child()], 'x', 'pt-BR');
    expect(plain?.lines.map((l) => l.role)).to.deep.equal(['when', 'name', 'class', 'code']);
    expect(plain?.lines.find((l) => l.role === 'code')?.aside).to.equal('Código');
  });

  for (const layout of PRINTER_LAYOUTS) {
    it(`on ${layout}, every line stays inside the page and the code is always printed`, () => {
      fc.assert(
        fc.property(
          fc.string({ minLength: 1, maxLength: 300 }),
          fc.option(fc.string({ minLength: 1, maxLength: 400 }), { nil: null }),
          (name, allergies) => {
            const [label] = labelsOf([child({ displayName: name, allergies })], '26/11/2026 10:05', 'pt-BR');
            if (label === undefined) return false;
            const placed = layOut(label, layout, halfEm);
            const page = LABEL_PAGES[layout];
            expect(placed.widthPt).to.be.closeTo(page.widthMm * PT_PER_MM, 1e-9);
            for (const t of placed.texts) {
              expect(t.x).to.be.at.least(0);
              expect(t.x + halfEm(t.text, t.sizePt, t.style)).to.be.at.most(placed.widthPt + 1e-6);
              expect(t.baseline).to.be.at.most(placed.heightPt);
            }
            return placed.texts.some((t) => t.role === 'code' && t.text === 'K7Q2');
          },
        ),
        { numRuns: 60 },
      );
    });
  }

  it('wraps at word boundaries and cuts a word longer than a line', () => {
    const fits = (s: string) => s.length <= 10;
    expect(wrap('Ana Beatriz de Souza', 10, fits)).to.deep.equal(['Ana', 'Beatriz de', 'Souza']);
    expect(wrap('Maximiliano', 10, fits)).to.deep.equal(['Maximilian', 'o']);
  });
});

describe('zplOf (ZPL II for Zebra-type printers)', () => {
  it('escapes what would end a field or start a command, so a name never becomes ZPL', () => {
    expect(zplField('A^XZ~JA_b\\')).to.equal('A_5EXZ_7EJA_5Fb_5C');
    expect(zplField('two\nlines')).to.equal('two lines');
  });

  it('one format per label, the page in dots at 203 dpi, each line a field with its text', () => {
    const [label] = labelsOf([child()], '26/11/2026 10:05', 'pt-BR');
    if (label === undefined) throw new Error('no label');
    const zpl = zplOf(layOut(label, 'label4x6', halfEm));
    expect(zpl.startsWith('^XA\n^CI28\n^PW812\n^LL1218\n')).to.equal(true);
    expect(zpl.trimEnd().endsWith('^XZ')).to.equal(true);
    expect(zpl).to.contain('^FDAna Souza^FS');
    expect(zpl).to.contain('^FDK7Q2^FS');
    expect(zpl.match(/\^XA/g)).to.have.length(1);
  });

  const PASS = 'CHAMADA:FP1:ABCDEFGH:ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  const qrTable: ReadonlyArray<[PrinterLayout, number]> = [
    // The side's dots over a version-3 symbol's 29 modules and its quiet zone of 8.
    ['brother62', 6],
    ['dymo30252', 3],
    ['label4x6', 9],
  ];
  for (const [layout, magnification] of qrTable)
    it(`on ${layout}, the stub's pass is a QR code field (^BQ, model 2, ${magnification} dots a module, level M)`, () => {
      const stub = labelsOf([child()], 'x', 'pt-BR', PASS).at(-1);
      if (stub === undefined) throw new Error('no stub');
      const zpl = zplOf(layOut(stub, layout, halfEm));
      expect([...zpl.matchAll(/\^BQN,2,(\d+)\^FD(.*?)\^FS/g)].map((m) => [Number(m[1]), m[2]])).to.deep.equal(
        [[magnification, `MA,${PASS}`]],
      );
      expect(zpl).to.contain('^FDK7Q2^FS');
    });

  it('a pass that is not base32 and colons is left out rather than written as commands', () => {
    const stub = labelsOf([child()], 'x', 'pt-BR', 'CHAMADA^XZ~JA').at(-1);
    if (stub === undefined) throw new Error('no stub');
    const zpl = zplOf(layOut(stub, 'brother62', halfEm));
    expect(zpl).to.not.contain('^BQ');
    expect(zpl).to.not.contain('~JA');
  });

  it("a stub without a pass, and a child's label, have no QR code", () => {
    for (const content of labelsOf([child()], 'x', 'pt-BR'))
      expect(zplOf(layOut(content, 'label4x6', halfEm))).to.not.contain('^BQ');
    const [label] = labelsOf([child()], 'x', 'pt-BR', PASS);
    if (label === undefined) throw new Error('no label');
    expect(layOut(label, 'label4x6', halfEm).qr).to.equal(undefined);
  });
});
