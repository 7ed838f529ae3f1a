/**
 * A roster spreadsheet as the office exports it (`;`-separated, CRLF, the import's Portuguese
 * headers): `rows` children of one class, `Criança {i} {surname}`, each with a code, a birth date, a
 * guardian and a phone of their own.
 */
export const rosterFile = (rows: number, surname: string, className = 'Maternal'): string =>
  [
    'Código;Nome;Data de Nascimento;Responsável;Telefone;Turma',
    ...Array.from(
      { length: rows },
      (_, i) =>
        `M-${i};Criança ${i} ${surname};${String((i % 28) + 1).padStart(2, '0')}/0${(i % 9) + 1}/2019;` +
        `Responsável ${i};(11) 9${String(10_000_000 + i).slice(-8)};${className}`,
    ),
  ].join('\r\n');
