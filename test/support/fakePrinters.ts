/**
 * Printers a test controls, on 127.0.0.1: a raw TCP listener that keeps what Zebra-type printers are
 * sent (ZPL), one that takes the connection and never reads it, an HTTP server that answers IPP
 * requests with garbage, and a port nothing listens on.
 */
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';

const listen = (server: Server | ReturnType<typeof createHttpServer>, port = 0): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') reject(new Error('no port'));
      else resolve(address.port);
    });
  });

const close = (server: Server | ReturnType<typeof createHttpServer>): Promise<void> =>
  new Promise((resolve) => server.close(() => resolve()));

export interface ZplPrinter {
  readonly uri: string;
  /** What each connection carried, in order. */
  readonly jobs: ReadonlyArray<string>;
  /** The printer goes off: it stops listening (the port refuses connections). */
  off(): Promise<void>;
  /** Back on, on the same port. */
  on(): Promise<void>;
  close(): Promise<void>;
}

/** A Zebra-type printer on raw TCP: reads the whole job, then closes, as a Zebra does. */
export const zplPrinter = async (): Promise<ZplPrinter> => {
  const jobs: string[] = [];
  const sockets = new Set<Socket>();
  const make = () =>
    createServer((socket) => {
      sockets.add(socket);
      let received = '';
      socket.setEncoding('utf8');
      socket.on('data', (c: string) => {
        received += c;
      });
      socket.on('end', () => {
        jobs.push(received);
        socket.end();
      });
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    });
  let server = make();
  const port = await listen(server);
  let listening = true;
  const printer: ZplPrinter = {
    uri: `tcp://127.0.0.1:${port}`,
    jobs,
    async off() {
      if (!listening) return;
      listening = false;
      for (const s of sockets) s.destroy();
      await close(server);
    },
    async on() {
      if (listening) return;
      server = make();
      await listen(server, port);
      listening = true;
    },
    async close() {
      if (listening) await printer.off();
    },
  };
  return printer;
};

/** A printer that takes the connection and then says nothing and reads nothing. */
export const silentPrinter = async (): Promise<{
  uri: string;
  connections: () => number;
  close(): Promise<void>;
}> => {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.pause();
    socket.on('error', () => undefined);
  });
  const port = await listen(server);
  return {
    uri: `tcp://127.0.0.1:${port}`,
    connections: () => connections,
    async close() {
      for (const s of sockets) s.destroy();
      await close(server);
    },
  };
};

/** An HTTP server where an IPP printer should be, answering 200 with bytes that are not IPP. */
export const garbageIppPrinter = async (): Promise<{
  uri: string;
  requests: () => number;
  close(): Promise<void>;
}> => {
  let requests = 0;
  const server = createHttpServer((req, res) => {
    requests += 1;
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/ipp' });
      res.end(Buffer.from([0x48, 0x54, 0x4d, 0x4c, 0x3c, 0x21, 0x2d, 0x2d, 0x20, 0x6e, 0x6f, 0x74]));
    });
  });
  const port = await listen(server);
  return {
    uri: `ipp://127.0.0.1:${port}/ipp/print`,
    requests: () => requests,
    close: () => close(server),
  };
};

/** A port nothing listens on (bound, then released). */
export const deadPrinterUri = async (): Promise<string> => {
  const server = createServer();
  const port = await listen(server);
  await close(server);
  return `tcp://127.0.0.1:${port}`;
};
