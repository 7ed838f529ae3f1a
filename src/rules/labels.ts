/**
 * What a print job puts on paper (0051): one label per child and one guardian's stub, the content of
 * the kiosk's labels (0028): the session and when, the child's name, the room, the allergy alert and
 * care notes, the day's code; the stub lists every child checked in together with their code.
 *
 * `labelsOf` says what the labels hold; `layOut` places it on the printer's page as lines of text at
 * positions in points, wrapped with the width a `measure` function gives (the renderer's own font
 * metrics), so the PDF, the raster and the ZPL renderers draw the same lines.
 */
import {
  LABEL_PAGES,
  type LabelPage,
  type LabelTypeSizes,
  type PrinterLayout,
} from '../domain/labelLayouts.js';
import type { LabelLanguage } from '../domain/printing.js';

export interface LabelledChild {
  readonly displayName: string;
  readonly className: string;
  readonly sessionTitle: string | null;
  readonly allergies: string | null;
  readonly specialNeeds: string | null;
  readonly code: string;
}

export type LineRole = 'when' | 'name' | 'class' | 'allergy' | 'care' | 'code' | 'stubChild' | 'hint';

/** One line of a label's content, before it is placed. */
export interface LabelLine {
  readonly role: LineRole;
  readonly text: string;
  /** The code's caption ("Código"), or the stub child's code, drawn beside the text. */
  readonly aside?: string;
}

export interface LabelContent {
  readonly kind: 'child' | 'stub';
  readonly lines: ReadonlyArray<LabelLine>;
  /** The stub's family pass (0049), drawn as a QR code: the text it encodes. */
  readonly pass?: string;
}

const CAPTIONS: Readonly<Record<LabelLanguage, Readonly<Record<string, string>>>> = {
  'pt-BR': {
    code: 'Código',
    allergy: 'ALERGIA: ',
    care: 'Cuidados: ',
    stub: 'Canhoto do responsável',
    hint: 'Apresente este código na saída.',
    untitled: 'Sem título',
    test: 'Etiqueta de teste',
    testName: 'Chamada',
  },
  en: {
    code: 'Code',
    allergy: 'ALLERGY: ',
    care: 'Care: ',
    stub: "Guardian's stub",
    hint: 'Show this code at pick-up.',
    untitled: 'Untitled',
    test: 'Test label',
    testName: 'Chamada',
  },
};

const caption = (lang: LabelLanguage, key: string): string => CAPTIONS[lang][key] ?? key;

/** The date and time as the door reads them, in the church's time zone. */
export const labelTime = (lang: LabelLanguage, at: Date, timeZone: string): string =>
  new Intl.DateTimeFormat(lang, {
    timeZone,
    day: '2-digit',
    month: '2-digit',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  }).format(at);

/** The labels of children checked in together: one each, then the stub with every child's code. */
export const labelsOf = (
  children: ReadonlyArray<LabelledChild>,
  when: string,
  lang: LabelLanguage,
  pass?: string,
): LabelContent[] => [
  ...children.map(
    (c): LabelContent => ({
      kind: 'child',
      lines: [
        {
          role: 'when',
          text: `${c.className} · ${c.sessionTitle ?? caption(lang, 'untitled')} · ${when}`,
        },
        { role: 'name', text: c.displayName },
        { role: 'class', text: c.className },
        ...(c.allergies === null
          ? []
          : [{ role: 'allergy' as const, text: `${caption(lang, 'allergy')}${c.allergies}` }]),
        ...(c.specialNeeds === null
          ? []
          : [{ role: 'care' as const, text: `${caption(lang, 'care')}${c.specialNeeds}` }]),
        { role: 'code', text: c.code, aside: caption(lang, 'code') },
      ],
    }),
  ),
  {
    kind: 'stub',
    lines: [
      { role: 'when', text: `${caption(lang, 'stub')} · ${when}` },
      ...children.map((c) => ({ role: 'stubChild' as const, text: c.displayName, aside: c.code })),
      { role: 'hint', text: caption(lang, 'hint') },
    ],
    ...(pass === undefined ? {} : { pass }),
  },
];

/** A printer's test label: a child's label and a stub with a made-up child and code. */
export const testLabelsOf = (lang: LabelLanguage, when: string): LabelContent[] =>
  labelsOf(
    [
      {
        displayName: caption(lang, 'testName'),
        className: caption(lang, 'test'),
        sessionTitle: null,
        allergies: null,
        specialNeeds: null,
        code: 'TESTE1',
      },
    ],
    when,
    lang,
  );

// ---- placing the lines on the page ----

export const PT_PER_MM = 72 / 25.4;

/** The width of `text` at `sizePt` in the renderer's font, in points. */
export type Measure = (text: string, sizePt: number, style: FontStyle) => number;

export type FontStyle = 'regular' | 'bold' | 'mono';

/** A run of text at a baseline, in points from the page's top left corner. */
export interface PlacedText {
  readonly text: string;
  readonly x: number;
  readonly baseline: number;
  readonly sizePt: number;
  readonly style: FontStyle;
  /** The line's role, for renderers that draw some roles differently (ZPL's fonts). */
  readonly role: LineRole;
  /** Extra space after each character but the last, in points (the codes'). */
  readonly letterSpacing?: number;
}

/** A QR code's square, its quiet zone included, in points from the page's top left corner. */
export interface PlacedQr {
  readonly text: string;
  readonly x: number;
  readonly y: number;
  readonly sidePt: number;
}

export interface PlacedLabel {
  readonly widthPt: number;
  readonly heightPt: number;
  readonly texts: ReadonlyArray<PlacedText>;
  readonly qr?: PlacedQr;
}

const LINE_HEIGHT = 1.15;
/** The codes' letter spacing, as the kiosk's `.code` has it (0.2em): a code is read letter by letter. */
export const CODE_LETTER_SPACING_EM = 0.2;

/** A code's width, its letter spacing included. */
const codeWidthOf = (code: string, sizePt: number, measure: Measure): number =>
  measure(code, sizePt, 'mono') + Math.max(0, [...code].length - 1) * CODE_LETTER_SPACING_EM * sizePt;
const LINE_GAP_PT = 0.6 * PT_PER_MM;

const sizeOf = (role: LineRole, sizes: LabelTypeSizes): number => {
  switch (role) {
    case 'when':
    case 'hint':
      return sizes.when;
    case 'name':
      return sizes.name;
    case 'class':
    case 'care':
      return sizes.class;
    case 'allergy':
      return sizes.allergy;
    case 'code':
      return sizes.code;
    case 'stubChild':
      return sizes.stubName;
  }
};

const styleOf = (role: LineRole): FontStyle =>
  role === 'name' || role === 'allergy' || role === 'stubChild' ? 'bold' : 'regular';

/**
 * Breaks `text` into lines no wider than `width` (words first; a word longer than a line is cut, as
 * the kiosk's `overflow-wrap: anywhere` does).
 */
export const wrap = (text: string, width: number, fits: (s: string) => boolean): string[] => {
  const lines: string[] = [];
  let current = '';
  const pushWord = (word: string) => {
    let rest = word;
    while (rest !== '' && !fits(rest)) {
      let cut = rest.length - 1;
      while (cut > 1 && !fits(rest.slice(0, cut))) cut -= 1;
      lines.push(rest.slice(0, cut));
      rest = rest.slice(cut);
    }
    current = rest;
  };
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    const joined = current === '' ? word : `${current} ${word}`;
    if (fits(joined)) current = joined;
    else {
      if (current !== '') lines.push(current);
      pushWord(word);
    }
  }
  if (current !== '' || lines.length === 0) lines.push(current);
  return width > 0 ? lines : [];
};

/**
 * Places a label's lines on the layout's page, top to bottom. What would run past the bottom edge is
 * left out (the kiosk's label clips it the same way), except the code, which is never dropped: on a
 * child's label the lines above it give way first.
 */
export const layOut = (content: LabelContent, layout: PrinterLayout, measure: Measure): PlacedLabel => {
  const page: LabelPage = LABEL_PAGES[layout];
  const widthPt = page.widthMm * PT_PER_MM;
  const heightPt = page.heightMm * PT_PER_MM;
  const left = page.paddingXMm * PT_PER_MM;
  const right = widthPt - left;
  const bottom = heightPt - page.paddingYMm * PT_PER_MM;
  const usable = right - left;
  const texts: PlacedText[] = [];
  let y = page.paddingYMm * PT_PER_MM;
  const codeLine = content.lines.find((l) => l.role === 'code');
  const qrSide = page.stubQr.sideMm * PT_PER_MM;
  const qrGap = 1 * PT_PER_MM;
  let qr: PlacedQr | undefined;
  /** Beside the children (the Dymo), the QR code takes the right of the rows; under them, nothing. */
  let rowsRight = right;
  let lastRow = -1;
  content.lines.forEach((l, i) => {
    if (l.role === 'stubChild') lastRow = i;
  });
  const codeHeight = codeLine === undefined ? 0 : sizeOf('code', page.sizes) * LINE_HEIGHT + LINE_GAP_PT;
  content.lines.forEach((line, index) => {
    placeLine(line);
    // Under the children: the pass after the last of them, when it fits whole (the codes come first).
    if (index === lastRow && content.pass !== undefined && !page.stubQr.beside && y + qrSide <= bottom) {
      qr = { text: content.pass, x: left, y, sidePt: qrSide };
      y += qrSide + LINE_GAP_PT;
    }
  });
  return { widthPt, heightPt, texts, ...(qr === undefined ? {} : { qr }) };

  function placeLine(line: LabelLine): void {
    if (line.role === 'hint' && !page.captions) return;
    if (
      line.role === 'stubChild' &&
      content.pass !== undefined &&
      page.stubQr.beside &&
      qr === undefined &&
      y + qrSide <= bottom
    ) {
      qr = { text: content.pass, x: right - qrSide, y, sidePt: qrSide };
      rowsRight = right - qrSide - qrGap;
    }
    const size = sizeOf(line.role, page.sizes);
    const style = styleOf(line.role);
    const lineHeight = size * LINE_HEIGHT;
    if (line.role === 'code') {
      const codeSize = size;
      const codeWidth = codeWidthOf(line.text, codeSize, measure);
      const captionSize = page.sizes.when;
      const showCaption =
        page.captions &&
        line.aside !== undefined &&
        measure(line.aside, captionSize, 'regular') + codeWidth + 6 <= usable;
      const baseline = Math.min(y + codeSize, bottom);
      let x = left;
      if (showCaption && line.aside !== undefined) {
        texts.push({ text: line.aside, x, baseline, sizePt: captionSize, style: 'regular', role: 'when' });
        x += measure(line.aside, captionSize, 'regular') + 6;
      }
      texts.push({
        text: line.text,
        x,
        baseline,
        sizePt: codeSize,
        style: 'mono',
        role: 'code',
        letterSpacing: CODE_LETTER_SPACING_EM * codeSize,
      });
      y = baseline + (lineHeight - codeSize) + LINE_GAP_PT;
      return;
    }
    if (line.role === 'stubChild') {
      const codeSize = page.sizes.stubCode;
      const code = line.aside ?? '';
      const codeWidth = codeWidthOf(code, codeSize, measure);
      const nameRoom = rowsRight - left - codeWidth - 4;
      const name = wrap(line.text, nameRoom, (s) => measure(s, size, style) <= nameRoom)[0] ?? '';
      const rowHeight = Math.max(size, codeSize) * LINE_HEIGHT;
      if (y + rowHeight > bottom) return;
      const baseline = y + Math.max(size, codeSize);
      texts.push({ text: name, x: left, baseline, sizePt: size, style, role: 'stubChild' });
      texts.push({
        text: code,
        x: rowsRight - codeWidth,
        baseline,
        sizePt: codeSize,
        style: 'mono',
        role: 'code',
        letterSpacing: CODE_LETTER_SPACING_EM * codeSize,
      });
      y += rowHeight + LINE_GAP_PT;
      return;
    }
    const wrapped = wrap(line.text, usable, (s) => measure(s, size, style) <= usable);
    for (const part of wrapped) {
      // The code keeps its room at the bottom of a child's label.
      const reserve = codeLine !== undefined && texts.every((t) => t.role !== 'code') ? codeHeight : 0;
      if (y + lineHeight + reserve > bottom) break;
      texts.push({ text: part, x: left, baseline: y + size, sizePt: size, style, role: line.role });
      y += lineHeight;
    }
    y += LINE_GAP_PT;
  }
};
