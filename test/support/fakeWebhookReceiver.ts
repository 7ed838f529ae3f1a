/**
 * A webhook receiver on 127.0.0.1 for the notifier's tests: records each request as it came (its
 * headers and exact body) and answers what the test's `answer` says.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export const fakeWebhookReceiver = async (answer: (received: ReadonlyArray<ReceivedRequest>) => number) => {
  const hits: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString('utf8');
    });
    req.on('end', () => {
      hits.push({ headers: req.headers, body });
      res.statusCode = answer(hits);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address: AddressInfo | string | null = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}/sms`,
    hits,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
};

/** One header's value, for a header a webhook sends once. */
export const headerOf = (r: ReceivedRequest, name: string): string | undefined => {
  const v = r.headers[name];
  return Array.isArray(v) ? v[0] : v;
};
