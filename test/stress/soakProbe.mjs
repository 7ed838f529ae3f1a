/**
 * Preloaded into the soak's service process (`SOAK_PROBE=1`, `--import` before the service): every
 * 5 s it appends to `SOAK_PROBE_OUT` one JSON line saying where the resident memory is, so that a
 * growth can be told apart by source. The soak prints the first line after its warm-up and the last.
 *
 * - `v8`: V8's committed heap (young generation apart) and the part of it in use; from
 *   `v8.getHeapSpaceStatistics()`.
 * - `anon`: resident anonymous memory (V8's heap, malloc's arenas, stacks), `brk`: malloc's main
 *   arena, `tables`: pages of LevelDB's table files mapped into the process (by database),
 *   `files`: every other file (the program); all from `/proc/self/smaps`.
 *
 * Plain JavaScript: it is imported before tsx is.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { getHeapSpaceStatistics } from 'node:v8';

const out = process.env.SOAK_PROBE_OUT;
const MiB = 1024 * 1024;
const mb = (bytes) => Math.round((bytes / MiB) * 10) / 10;
const started = Date.now();

const mappings = () => {
  const tables = {};
  let anon = 0;
  let brk = 0;
  let files = 0;
  let kind;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head !== null) {
      const name = head[1] ?? '';
      kind = name === '' ? 'anon' : name === '[heap]' ? 'brk' : name.endsWith('.ldb') ? name : 'files';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss === null || kind === undefined) continue;
    const bytes = Number(rss[1]) * 1024;
    if (kind === 'anon') anon += bytes;
    else if (kind === 'brk') brk += bytes;
    else if (kind === 'files') files += bytes;
    else {
      const db = basename(dirname(kind));
      tables[db] = (tables[db] ?? 0) + bytes;
    }
  }
  return {
    // The main arena counts as anonymous in VmRSS (RssAnon) too.
    anon: mb(anon + brk),
    brk: mb(brk),
    tables: mb(Object.values(tables).reduce((a, b) => a + b, 0)),
    tablesByDb: Object.fromEntries(
      Object.entries(tables)
        .filter(([, bytes]) => bytes >= MiB / 2)
        .map(([db, bytes]) => [db, mb(bytes)]),
    ),
    files: mb(files),
  };
};

const sample = () => {
  const spaces = getHeapSpaceStatistics();
  const sum = (pick, young) =>
    spaces
      .filter((s) => (s.space_name === 'new_space' || s.space_name === 'new_large_object_space') === young)
      .reduce((a, s) => a + pick(s), 0);
  const line = {
    t: Math.round((Date.now() - started) / 1000),
    v8: {
      committed: mb(sum((s) => s.physical_space_size, false)),
      used: mb(sum((s) => s.space_used_size, false)),
      young: mb(sum((s) => s.physical_space_size, true)),
    },
    ...mappings(),
  };
  appendFileSync(out, `${JSON.stringify(line)}\n`);
};

if (out !== undefined && out !== '') setInterval(sample, 5000).unref();
