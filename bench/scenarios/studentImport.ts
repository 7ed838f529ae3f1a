/**
 * A student import of 5,000 children (decision 0030) through the REST endpoint: the dry run and the
 * applying run, each on a fresh service, as an office would do them. The baseline is the time to
 * create the same children one `POST /api/v1/students` at a time, up to 500 of them (scaled), so the
 * row shows what batching buys. Printed, never asserted.
 */
import { randomUUID } from 'node:crypto';
import { mutationHeaders, startTestService, type TestService } from '../../test/support/testService.js';
import { median, spread } from '../stats.js';
import type { ScenarioResult } from './types.js';

const csvOf = (rows: number): string =>
  [
    'Código;Nome;Data de Nascimento;Responsável;Telefone;Turma;Alergias',
    ...Array.from(
      { length: rows },
      (_, i) =>
        `M-${i};Criança ${i} da Silva;${String((i % 28) + 1).padStart(2, '0')}/0${(i % 9) + 1}/2019;` +
        `Responsável ${i};(11) 9${String(10_000_000 + i).slice(-8)};Maternal;${i % 10 === 0 ? 'leite' : ''}`,
    ),
  ].join('\r\n');

const withClass = async (): Promise<{ svc: TestService; classId: string }> => {
  const svc = await startTestService();
  const r = await fetch(`${svc.url}/api/v1/classes`, {
    method: 'POST',
    headers: mutationHeaders('dev-admin-token-0123456789'),
    body: JSON.stringify({ name: 'Maternal' }),
  });
  const body: unknown = await r.json();
  const classId = typeof body === 'object' && body !== null && 'classId' in body ? String(body.classId) : '';
  return { svc, classId };
};

const seconds = async (work: () => Promise<void>): Promise<number> => {
  const started = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - started) / 1e9;
};

const importOnce = async (csv: string, dryRun: boolean, rows: number): Promise<number> => {
  const { svc } = await withClass();
  try {
    return await seconds(async () => {
      const r = await fetch(`${svc.url}/api/v1/imports/students?dryRun=${dryRun}`, {
        method: 'POST',
        headers: { ...mutationHeaders('dev-admin-token-0123456789'), 'Content-Type': 'text/csv' },
        body: csv,
      });
      const text = await r.text();
      if (r.status !== 200 || !text.includes(`"created":${rows}`))
        throw new Error(`import answered ${r.status}`);
    });
  } finally {
    await svc.dispose();
  }
};

const oneByOne = async (count: number): Promise<number> => {
  const { svc, classId } = await withClass();
  try {
    return await seconds(async () => {
      for (let i = 0; i < count; i += 1) {
        const r = await fetch(`${svc.url}/api/v1/students`, {
          method: 'POST',
          headers: mutationHeaders('dev-admin-token-0123456789', randomUUID()),
          body: JSON.stringify({
            displayName: `Criança ${i}`,
            guardianName: `Resp ${i}`,
            phones: [],
            classId,
          }),
        });
        if (r.status !== 201) throw new Error(`create answered ${r.status}`);
        await r.arrayBuffer();
      }
    });
  } finally {
    await svc.dispose();
  }
};

export const studentImport = async (quick: boolean): Promise<ScenarioResult> => {
  const rows = quick ? 1000 : 5000;
  const csv = csvOf(rows);
  const runs = quick ? 1 : 3;
  const applied: number[] = [];
  const dry: number[] = [];
  const base: number[] = [];
  const sample = Math.min(500, rows);
  for (let i = 0; i < runs; i += 1) {
    dry.push(await importOnce(csv, true, rows));
    applied.push(await importOnce(csv, false, rows));
    base.push(((await oneByOne(sample)) * rows) / sample);
  }
  process.stderr.write(`bench: import dry run of ${rows} rows, median ${median(dry).toFixed(2)} s\n`);
  return {
    scenario: `student import of ${rows.toLocaleString('en')} rows applied (dry run: ${median(dry).toFixed(1)} s)`,
    unit: 's',
    median: median(applied),
    spread: spread(applied),
    p99Ms: undefined,
    baseline: {
      name: `the same children one POST /students at a time (${sample} timed, scaled)`,
      median: median(base),
      spread: spread(base),
    },
    ratio: median(applied.map((a, i) => a / (base[i] ?? 1))),
    target: 'well under a minute (issue 21)',
    runs,
  };
};
