// Preloaded into the service by `npm run bench -- --cpu-prof DIR` (through NODE_OPTIONS, where Node 20
// refuses `--cpu-prof` itself): profiles the whole process and writes DIR/<pid>.cpuprofile on exit.
// Plain JavaScript because the bench runs the built service with plain node.
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.BENCH_CPU_PROF_DIR;
if (dir !== undefined && dir !== '') {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.start');
  // A session on the process's own thread answers synchronously, so this completes inside 'exit'.
  process.on('exit', () => {
    session.post('Profiler.stop', (error, result) => {
      if (error !== null) return;
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
