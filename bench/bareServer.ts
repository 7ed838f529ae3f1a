/**
 * The baseline for HTTP scenarios: a bare Express 5 app answering a small JSON body, in its own
 * process like the service, so both are driven with the same load settings. Prints its URL.
 */
import { createServer } from 'node:http';
import express from 'express';

const app = express();
app.use(express.json());
app.get('/hello', (_req, res) => {
  res.json({ hello: 'world' });
});
app.post('/hello', (req, res) => {
  res.status(201).json({ received: typeof req.body === 'object' });
});
const server = createServer(app);
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address !== null && typeof address !== 'string')
    process.stdout.write(`{"url":"http://127.0.0.1:${address.port}"}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
