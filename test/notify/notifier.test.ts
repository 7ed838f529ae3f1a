import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { webhookNotifier } from '../../src/notify/notifier.js';

describe('webhook notifier', () => {
  it('POSTs the code to the gateway as JSON, and fails when the gateway refuses', async () => {
    const received: string[] = [];
    let status = 200;
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString('utf8');
      });
      req.on('end', () => {
        received.push(`${req.method} ${req.headers['content-type']} ${body}`);
        res.statusCode = status;
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const address: AddressInfo | string | null = server.address();
      if (address === null || typeof address === 'string') throw new Error('no port');
      const { port } = address;
      const notifier = webhookNotifier(`http://127.0.0.1:${port}/sms`);
      await notifier.sendCode('+55 11 5555-2222', '123456', 'pickup-verification');
      expect(received[0]).to.equal(
        'POST application/json {"to":"+55 11 5555-2222","message":"Chamada: seu código é 123456","purpose":"pickup-verification"}',
      );
      status = 502;
      let failed = false;
      await notifier.sendCode('+55 11 5555-2222', '654321', 'pickup-verification').catch(() => {
        failed = true;
      });
      expect(failed).to.equal(true);
    } finally {
      server.close();
    }
  });
});
