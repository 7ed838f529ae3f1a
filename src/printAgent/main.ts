/**
 * The print agent's command (decision 0054):
 *
 *   npm run print-agent -- --server URL [--wait SECONDS] [--printer-hosts HOST,HOST]
 *   node dist/server/printAgent.js --server URL …          (in the image)
 *
 * The token an ADMIN issued (`POST /api/v1/print-agents`) is read from PRINT_AGENT_TOKEN, never from
 * the command line (other users of the machine see a process's arguments). `--printer-hosts` (or
 * PRINT_AGENT_PRINTER_HOSTS) bounds the hosts the agent prints to, as PRINTER_HOSTS does the
 * service's. Logs are JSON lines on standard output. SIGTERM or SIGINT stops it gracefully.
 * Exit status: 0 stopped, 2 usage, 3 the server refused the token.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { parseAgentToken } from '../domain/printAgents.js';
import { createLogger } from '../log/logger.js';
import { startPrintAgent } from './agent.js';

const USAGE = `usage: print-agent --server URL [--wait SECONDS] [--printer-hosts HOST,HOST]
The agent's token is read from PRINT_AGENT_TOKEN.`;

export const EXIT = { ok: 0, usage: 2, refused: 3 } as const;

export const main = async (argv: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Promise<number> => {
  let values: {
    server?: string | undefined;
    wait?: string | undefined;
    'printer-hosts'?: string | undefined;
  };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { server: { type: 'string' }, wait: { type: 'string' }, 'printer-hosts': { type: 'string' } },
      strict: true,
    }));
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n${USAGE}\n`);
    return EXIT.usage;
  }
  const token = env.PRINT_AGENT_TOKEN ?? '';
  const server = values.server ?? env.PRINT_AGENT_SERVER;
  const wait = values.wait === undefined ? 25 : Number(values.wait);
  const problems = [
    ...(server === undefined || !/^https?:\/\/[^\s]+$/.test(server)
      ? ['--server must be an http(s) URL']
      : []),
    ...(parseAgentToken(token) === undefined
      ? ['PRINT_AGENT_TOKEN must hold the token an ADMIN issued']
      : []),
    ...(Number.isInteger(wait) && wait >= 0 && wait <= 30 ? [] : ['--wait must be 0 to 30 seconds']),
  ];
  if (problems.length > 0 || server === undefined) {
    process.stderr.write(`${problems.join('\n')}\n${USAGE}\n`);
    return EXIT.usage;
  }
  const hosts = (values['printer-hosts'] ?? env.PRINT_AGENT_PRINTER_HOSTS ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h !== '');
  const logger = createLogger(env.LOG_LEVEL === 'debug' ? 'debug' : 'info').child({
    component: 'print-agent',
  });
  const agent = startPrintAgent({ server, token, waitS: wait, printerHosts: hosts, log: logger });
  const stop = () => {
    logger.info({}, 'stopping');
    void agent.stop();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  const how = await agent.ended;
  if (how === 'stopped') await agent.stop();
  logger.info({ how }, 'print agent ended');
  return how === 'refused' ? EXIT.refused : EXIT.ok;
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  void main(process.argv.slice(2), process.env).then((code) => {
    process.exitCode = code;
  });
}
