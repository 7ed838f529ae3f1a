/**
 * The print agent end to end, three processes (0054): the service (the bundle the image runs), the
 * agent (`src/printAgent/main.ts`, as `npm run print-agent` starts it) and a Zebra-type printer (a TCP
 * listener in this process that keeps the ZPL it is sent). Between the agent and the service sits an
 * HTTP relay this test controls: it can refuse every connection (the church's internet is down) or
 * deliver a status report and drop its answer (the report landed, the agent never heard). The agent
 * is also paused and resumed (SIGSTOP, SIGCONT), killed and started again, stopped with SIGTERM, and ended by a revocation. Every job is
 * printed, each once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { type ZplPrinter, zplPrinter } from '../support/fakePrinters.js';
import { collect, type ServiceProcess, serviceProcess } from '../support/mainProcess.js';
import { type IssuedAgent, issueAgent } from '../support/printAgents.js';
import { checkInAll, createPrinter, type PrintJobSeen, printLabels, readJob } from '../support/printing.js';
import { seedSmallRoster } from '../support/seed.js';
import { DEV_TOKENS, mutate } from '../support/testService.js';

/** An HTTP relay to `target` on a port of its own, that the test can cut and restore. */
interface Relay {
  readonly url: string;
  /** Refuses connections and ends those open (the line is down). */
  cut(): Promise<void>;
  restore(): Promise<void>;
  /** The next `n` status reports reach the service, and their answers are dropped. */
  dropReportAnswers(n: number): void;
  readonly droppedAnswers: () => number;
  close(): Promise<void>;
}

const relayTo = async (target: string): Promise<Relay> => {
  const sockets = new Set<Socket>();
  let toDrop = 0;
  let dropped = 0;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    // The agent's bodies are JSON.
    req.setEncoding('utf8');
    let sent = '';
    for await (const c of req) sent += String(c);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers))
      if (typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k)) headers[k] = v;
    try {
      const answer = await fetch(`${target}${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers,
        ...(sent === '' ? {} : { body: sent }),
      });
      const body = await answer.text();
      if (req.method === 'POST' && /\/status$/.test(req.url ?? '') && toDrop > 0) {
        toDrop -= 1;
        dropped += 1;
        req.socket.destroy();
        return;
      }
      res.writeHead(answer.status, {
        'content-type': answer.headers.get('content-type') ?? 'application/json',
      });
      res.end(body);
    } catch {
      req.socket.destroy();
    }
  };
  const make = () => {
    const s = createServer((req, res) => void handle(req, res));
    s.on('connection', (sock: Socket) => {
      sockets.add(sock);
      sock.on('close', () => sockets.delete(sock));
    });
    return s;
  };
  let server: Server = make();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const port = address.port;
  let up = true;
  const relay: Relay = {
    url: `http://127.0.0.1:${port}`,
    async cut() {
      if (!up) return;
      up = false;
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
    async restore() {
      if (up) return;
      server = make();
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
      up = true;
    },
    dropReportAnswers(n) {
      toDrop = n;
    },
    droppedAnswers: () => dropped,
    close: () => relay.cut(),
  };
  return relay;
};

/** The agent as its command starts it, through the relay. */
const startAgent = (server: string, token: string): { child: ChildProcess; out: () => string } => {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/printAgent/main.ts', '--server', server, '--wait', '5'],
    {
      env: { PATH: process.env.PATH ?? '', PRINT_AGENT_TOKEN: token, PRINT_AGENT_PRINTER_HOSTS: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const stdout = collect(child.stdout);
  const stderr = collect(child.stderr);
  const out = () => `${stdout()}\n${stderr()}`;
  agentOut = out;
  return { child, out };
};

const exitOf = async (child: ChildProcess): Promise<number | null> => {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
};

/**
 * The job once `done` or `failed`, read every 250 ms (the door's own token and device would meet its
 * rate limit at the 50 ms of `finishedJob` over the seconds a reconnection takes); at most a minute.
 */
const finishedJob = async (url: string, jobId: string): Promise<PrintJobSeen> => {
  for (let i = 0; i < 240; i += 1) {
    const job = await readJob(url, jobId);
    if (job.status === 'done' || job.status === 'failed') return job;
    await sleep(250);
  }
  throw new Error(
    `print job ${jobId} did not finish: ${JSON.stringify(await readJob(url, jobId))}\n${agentOut()}`,
  );
};

let agentOut = (): string => '';

/** Each job's ZPL names its child's code: the printed jobs, as the codes they carry. */
const printedCodes = (printer: ZplPrinter, codes: ReadonlyArray<string>): string[] =>
  printer.jobs.flatMap((zpl) => codes.filter((c) => zpl.includes(c)).slice(0, 1));

describe('the print agent end to end: service, agent and printer as processes of their own', function () {
  this.timeout(180_000);
  let svc: ServiceProcess;
  let url: string;
  let relay: Relay;
  let printer: ZplPrinter;
  let agent: IssuedAgent;
  let printerId: string;
  let running: { child: ChildProcess; out: () => string } | undefined;
  const checkIns: Array<{ checkInId: string; code: string }> = [];

  before(async () => {
    svc = await serviceProcess('print-agent', {
      AUTH_MODE: 'dev',
      ...DEV_TOKENS,
      PRINT_GIVE_UP_SECONDS: '120',
    });
    url = await svc.start(60_000);
    relay = await relayTo(url);
    printer = await zplPrinter();
    const roster = await seedSmallRoster(
      url,
      ['Ana Beatriz', 'Bruno Souza', 'Caio Lima', 'Davi Rocha', 'Eva Reis'],
      new Date().toISOString().slice(0, 10),
    );
    checkIns.push(...(await checkInAll(url, roster.sessionId, roster.studentIds)));
    agent = await issueAgent(url, 'Igreja, sala dos fundos');
    printerId = await createPrinter(url, {
      name: 'Zebra da porta',
      protocol: 'zpl',
      uri: printer.uri,
      layout: 'label4x6',
      agentId: agent.agentId,
    });
  });
  after(async () => {
    if (running !== undefined && running.child.exitCode === null) {
      running.child.kill('SIGKILL');
      await exitOf(running.child);
    }
    await relay?.close();
    await printer?.close();
    await svc?.dispose();
  });

  const codeOf = (i: number): string => checkIns[i]?.code ?? '';
  const printOne = (i: number) => printLabels(url, printerId, [checkIns[i]?.checkInId ?? '']);

  it('prints a job the agent takes through its outbound connection', async () => {
    running = startAgent(relay.url, agent.token);
    const jobId = await printOne(0);
    expect(await finishedJob(url, jobId), running.out()).to.deep.include({ status: 'done', attempts: 1 });
    expect(printedCodes(printer, [codeOf(0)])).to.deep.equal([codeOf(0)]);
  });

  it('the line down and back: a job queued meanwhile waits, then prints once', async () => {
    await relay.cut();
    const jobId = await printOne(1);
    // Long enough for the agent to have tried, and failed, to reach the service a few times.
    await sleep(3_000);
    // Queued, or claimed by a call whose answer the cut lost (the agent is given it again later).
    expect((await readJob(url, jobId)).status).to.be.oneOf(['queued', 'printing']);
    expect(printer.jobs).to.have.length(1);
    await relay.restore();
    expect(await finishedJob(url, jobId), running?.out()).to.deep.include({
      status: 'done',
      attempts: 1,
    });
    expect(printedCodes(printer, [codeOf(0), codeOf(1)])).to.deep.equal([codeOf(0), codeOf(1)]);
  });

  it('a report that landed but whose answer was lost is sent again, and the job is not printed twice', async () => {
    relay.dropReportAnswers(2);
    const jobId = await printOne(2);
    expect(await finishedJob(url, jobId), running?.out()).to.deep.include({
      status: 'done',
      attempts: 1,
    });
    // The agent resends until it hears; let it, then count.
    for (let i = 0; i < 100 && relay.droppedAnswers() < 2; i += 1) await sleep(100);
    expect(relay.droppedAnswers()).to.equal(2);
    await sleep(1_000);
    expect(printedCodes(printer, [codeOf(0), codeOf(1), codeOf(2)])).to.deep.equal([
      codeOf(0),
      codeOf(1),
      codeOf(2),
    ]);
  });

  it('the agent paused (SIGSTOP) while its call takes a job, then resumed (SIGCONT): the job prints once', async () => {
    const current = running;
    if (current === undefined) throw new Error('no agent');
    current.child.kill('SIGSTOP');
    try {
      const jobId = await printOne(4);
      // The service answers the paused agent's waiting call; nothing reaches the printer meanwhile.
      await sleep(3_000);
      expect((await readJob(url, jobId)).status).to.be.oneOf(['queued', 'printing']);
      expect(printer.jobs).to.have.length(3);
      current.child.kill('SIGCONT');
      expect(await finishedJob(url, jobId), current.out()).to.deep.include({ status: 'done', attempts: 1 });
      expect(printedCodes(printer, [0, 1, 2, 4].map(codeOf))).to.deep.equal([0, 1, 2, 4].map(codeOf));
    } finally {
      current.child.kill('SIGCONT');
    }
  });

  it('the agent killed and started again: a job queued while it was down prints once', async () => {
    const first = running;
    if (first === undefined) throw new Error('no agent');
    first.child.kill('SIGKILL');
    await exitOf(first.child);
    const jobId = await printOne(3);
    // Queued, or claimed by the dead agent's call still open through the relay (an answer nobody reads):
    // the new agent asks without waiting and is given it at once.
    expect((await readJob(url, jobId)).status).to.be.oneOf(['queued', 'printing']);
    running = startAgent(relay.url, agent.token);
    expect(await finishedJob(url, jobId), running.out()).to.deep.include({
      status: 'done',
      attempts: 1,
    });
    expect(printer.jobs).to.have.length(5);
  });

  it('SIGTERM stops the agent gracefully (exit 0); a revoked token ends it (exit 3)', async () => {
    const current = running;
    if (current === undefined) throw new Error('no agent');
    current.child.kill('SIGTERM');
    expect(await exitOf(current.child), current.out()).to.equal(0);
    running = startAgent(relay.url, agent.token);
    const r = await mutate(
      `${url}/api/v1/print-agents/${agent.agentId}`,
      'DELETE',
      undefined,
      DEV_TOKENS.DEV_ADMIN_TOKEN,
    );
    expect(r.status, r.text).to.equal(200);
    expect(await exitOf(running.child), running.out()).to.equal(3);
    expect(running.out()).to.contain('refused the agent token');
    // Every job printed, each once.
    expect(printedCodes(printer, [0, 1, 2, 4, 3].map(codeOf))).to.deep.equal([0, 1, 2, 4, 3].map(codeOf));
  });
});
