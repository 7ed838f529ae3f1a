/**
 * Sending a job to a printer (0051), each attempt bounded in time:
 * - IPP (`ipp://`, `ipps://`): Get-Printer-Attributes, then Print-Job in a format the printer lists:
 *   PDF when it takes PDF, else PWG Raster (what every IPP Everywhere printer takes) at a resolution
 *   and in a colour space it lists. Printers' certificates are self-signed as a rule, so `ipps://`
 *   encrypts without checking the certificate, as CUPS does for printers it discovers.
 * - ZPL (`tcp://`, port 9100): the labels' ZPL written to the socket, which the printer closes.
 * A failure is a `PrintFailureError` whose code says whether trying again may help (`printRetry.ts`).
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { connect } from 'node:net';
import { LABEL_PAGES, type PrinterLayout } from '../domain/labelLayouts.js';
import {
  type PrinterAddress,
  type PrinterDoc,
  type PrintFailure,
  type PrintFailureCode,
  printerAddress,
} from '../domain/printing.js';
import type { PlacedLabel } from '../rules/labels.js';
import { zplOf } from '../rules/zpl.js';
import { concatBytes, utf8Bytes } from './bytes.js';
import {
  decodeIpp,
  encodeIpp,
  IPP_OPERATION,
  IPP_TAG,
  IppDecodeError,
  type IppResponse,
  textsOf,
} from './ippCodec.js';
import { type PwgType, pwgRaster } from './pwgRaster.js';
import { type Rendered, rasterise, renderPdf } from './render.js';

export class PrintFailureError extends Error {
  constructor(
    readonly code: PrintFailureCode,
    message: string,
  ) {
    super(message);
    this.name = 'PrintFailureError';
  }
}

export interface Sent {
  readonly format: string;
  readonly bytes: number;
  readonly pages: number;
}

/** What sending needs of a printer: the service's record of it, or the printer a job hands an agent. */
export type PrinterTarget = Pick<PrinterDoc, 'uri' | 'protocol' | 'layout'>;

/**
 * Sends laid-out labels to a printer over its transport (the service's worker and the print agent
 * alike), bounded by `deadline` (epoch ms).
 */
export const sendToPrinter = (
  printer: PrinterTarget,
  labels: ReadonlyArray<PlacedLabel>,
  deadline: number,
): Promise<Sent> => {
  const address = printerAddress(printer.uri);
  if (address === undefined)
    return Promise.reject(
      new PrintFailureError('PRINTER_REFUSED', 'the printer URI is not an ipp, ipps or tcp address'),
    );
  return printer.protocol === 'zpl'
    ? sendZpl(address, labels, deadline)
    : sendIpp(address, labels, printer.layout, deadline);
};

/** What a failed attempt met, as a job records it; anything but a `PrintFailureError` is a bug's error. */
export const attemptFailure = (e: unknown): PrintFailure =>
  e instanceof PrintFailureError
    ? { code: e.code, message: e.message }
    : {
        code: 'PRINTER_UNREACHABLE',
        message: `the attempt failed (${e instanceof Error ? e.name : typeof e})`,
      };

/** An IPP answer is a few kilobytes; a printer that streams more is not answering IPP. */
const MAX_ANSWER_BYTES = 1 << 20;

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'EADDRNOTAVAIL',
]);

const failureOf = (e: unknown, where: string): PrintFailureError => {
  if (e instanceof PrintFailureError) return e;
  const code = e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : undefined;
  if (code !== undefined && NETWORK_CODES.has(code))
    return new PrintFailureError(
      'PRINTER_UNREACHABLE',
      `${where}: the printer could not be reached (${code})`,
    );
  if (e instanceof IppDecodeError)
    return new PrintFailureError(
      'PRINTER_BAD_ANSWER',
      `${where}: the printer's answer is not IPP (${e.message})`,
    );
  const name = e instanceof Error ? e.name : typeof e;
  return new PrintFailureError('PRINTER_UNREACHABLE', `${where}: the connection failed (${code ?? name})`);
};

const timedOut = (where: string, ms: number) =>
  new PrintFailureError(
    'PRINTER_TIMEOUT',
    `${where}: the printer did not answer within ${Math.round(ms / 1000)} s`,
  );

/** One IPP request over HTTP, its answer decoded, within `deadline` (ms since the epoch). */
const ippCall = (
  address: PrinterAddress,
  body: Uint8Array,
  deadline: number,
  where: string,
): Promise<IppResponse> =>
  new Promise((resolve, reject) => {
    const budget = Math.max(1, deadline - Date.now());
    const options = {
      host: address.host,
      port: address.port,
      path: address.path,
      method: 'POST',
      headers: { 'Content-Type': 'application/ipp', 'Content-Length': String(body.length) },
      rejectUnauthorized: false,
    };
    const req = (address.scheme === 'ipps' ? https : http).request(options, (res) => {
      const chunks: Uint8Array[] = [];
      let size = 0;
      res.on('data', (chunk: Uint8Array) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) {
          req.destroy(
            new PrintFailureError('PRINTER_BAD_ANSWER', `${where}: the printer's answer is too long for IPP`),
          );
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => {
        clearTimeout(timer);
        if (res.statusCode !== 200) {
          reject(
            new PrintFailureError(
              'PRINTER_BAD_ANSWER',
              `${where}: the printer answered HTTP ${res.statusCode ?? '?'}`,
            ),
          );
          return;
        }
        try {
          resolve(decodeIpp(concatBytes(chunks)));
        } catch (e) {
          reject(failureOf(e, where));
        }
      });
      res.on('error', (e) => {
        clearTimeout(timer);
        reject(failureOf(e, where));
      });
    });
    const timer = setTimeout(() => req.destroy(timedOut(where, budget)), budget);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(failureOf(e, where));
    });
    req.end(body);
  });

const operationGroup = (address: PrinterAddress) => ({
  tag: IPP_TAG.operation,
  attributes: [
    { tag: IPP_TAG.charset, name: 'attributes-charset', values: ['utf-8'] },
    { tag: IPP_TAG.naturalLanguage, name: 'attributes-natural-language', values: ['en'] },
    {
      tag: IPP_TAG.uri,
      name: 'printer-uri',
      values: [
        `${address.scheme}://${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}${address.path}`,
      ],
    },
    { tag: IPP_TAG.nameWithoutLanguage, name: 'requesting-user-name', values: ['chamada'] },
  ],
});

const STATUS_NAMES: Readonly<Record<number, string>> = {
  1024: 'bad request',
  1025: 'forbidden',
  1026: 'not authenticated',
  1027: 'not authorized',
  1034: 'document format not supported',
  1035: 'attributes or values not supported',
  1280: 'internal error',
  1282: 'service unavailable',
  1284: 'device error',
  1285: 'temporary error',
  1286: 'not accepting jobs',
  1287: 'busy',
};

const statusFailure = (status: number, where: string): PrintFailureError | undefined => {
  if (status < 0x0100) return undefined;
  const said = `${STATUS_NAMES[status] ?? 'error'}, status 0x${status.toString(16).padStart(4, '0')}`;
  // A printer busy, paused or in trouble may take the job later; one that refused it will refuse it again.
  return status >= 0x0500 && status !== 0x0501 && status !== 0x0503
    ? new PrintFailureError('PRINTER_BUSY', `${where}: the printer cannot take jobs now (${said})`)
    : new PrintFailureError('PRINTER_REFUSED', `${where}: the printer refused the job (${said})`);
};

export interface Chosen {
  readonly format: 'application/pdf' | 'image/pwg-raster';
  readonly dpi: number;
  readonly type: PwgType;
}

/**
 * The format to send, from what the printer lists: PDF (the text stays text, at the printer's own
 * resolution), else PWG Raster at the listed resolution nearest 300 dpi, in 8-bit grey when listed,
 * else 1-bit black. Undefined when it lists neither.
 */
export const chooseFormat = (attrs: IppResponse): Chosen | undefined => {
  const formats = textsOf(attrs, 'document-format-supported').map((f) => f.toLowerCase());
  if (formats.includes('application/pdf')) return { format: 'application/pdf', dpi: 300, type: 'sgray_8' };
  if (!formats.includes('image/pwg-raster')) return undefined;
  const dpis = (attrs.attributes.get('pwg-raster-document-resolution-supported') ?? []).flatMap((v) =>
    v.kind === 'resolution' && v.units === 3 && v.x === v.y ? [v.x] : [],
  );
  const dpi =
    dpis.length === 0 ? 300 : ([...dpis].sort((a, b) => Math.abs(a - 300) - Math.abs(b - 300))[0] ?? 300);
  const types = textsOf(attrs, 'pwg-raster-document-type-supported');
  const type: PwgType = types.includes('sgray_8') || !types.includes('black_1') ? 'sgray_8' : 'black_1';
  return { format: 'image/pwg-raster', dpi, type };
};

export const renderFor = async (
  chosen: Chosen,
  labels: ReadonlyArray<PlacedLabel>,
  layout: PrinterLayout,
): Promise<Rendered> => {
  if (chosen.format === 'application/pdf') return renderPdf(labels);
  const page = LABEL_PAGES[layout];
  const name = `custom_${layout}_${Math.round(page.widthMm)}x${Math.round(page.heightMm)}mm`;
  const bytes = pwgRaster(
    labels.map((l) => rasterise(l, chosen.dpi)),
    chosen.type,
    name,
  );
  return { format: 'image/pwg-raster', bytes, pages: labels.length };
};

/** Prints the labels on an IPP printer; resolves once the printer has accepted the job. */
export const sendIpp = async (
  address: PrinterAddress,
  labels: ReadonlyArray<PlacedLabel>,
  layout: PrinterLayout,
  deadline: number,
): Promise<Sent> => {
  const attrs = await ippCall(
    address,
    encodeIpp({
      operation: IPP_OPERATION.getPrinterAttributes,
      requestId: 1,
      groups: [
        {
          ...operationGroup(address),
          attributes: [
            ...operationGroup(address).attributes,
            {
              tag: IPP_TAG.keyword,
              name: 'requested-attributes',
              values: [
                'document-format-supported',
                'printer-is-accepting-jobs',
                'pwg-raster-document-resolution-supported',
                'pwg-raster-document-type-supported',
              ],
            },
          ],
        },
      ],
    }),
    deadline,
    'Get-Printer-Attributes',
  );
  const refused = statusFailure(attrs.status, 'Get-Printer-Attributes');
  if (refused !== undefined) throw refused;
  const chosen = chooseFormat(attrs);
  if (chosen === undefined) {
    const listed = textsOf(attrs, 'document-format-supported').join(', ');
    throw new PrintFailureError(
      'PRINTER_NO_FORMAT',
      `the printer takes none of PDF and PWG Raster (it lists ${listed === '' ? 'nothing' : listed})`,
    );
  }
  const rendered = await renderFor(chosen, labels, layout);
  const answer = await ippCall(
    address,
    encodeIpp({
      operation: IPP_OPERATION.printJob,
      requestId: 2,
      groups: [
        {
          ...operationGroup(address),
          attributes: [
            ...operationGroup(address).attributes,
            { tag: IPP_TAG.nameWithoutLanguage, name: 'job-name', values: ['Chamada labels'] },
            { tag: IPP_TAG.mimeMediaType, name: 'document-format', values: [rendered.format] },
          ],
        },
      ],
      document: rendered.bytes,
    }),
    deadline,
    'Print-Job',
  );
  const failed = statusFailure(answer.status, 'Print-Job');
  if (failed !== undefined) throw failed;
  return { format: rendered.format, bytes: rendered.bytes.length, pages: rendered.pages };
};

/** Writes the labels' ZPL to the printer's socket; resolves once the printer has closed it. */
export const sendZpl = (
  address: PrinterAddress,
  labels: ReadonlyArray<PlacedLabel>,
  deadline: number,
): Promise<Sent> =>
  new Promise((resolve, reject) => {
    const zpl = utf8Bytes(labels.map(zplOf).join(''));
    const budget = Math.max(1, deadline - Date.now());
    const socket = connect({ host: address.host, port: address.port });
    let written = false;
    const timer = setTimeout(() => {
      socket.destroy();
      // Everything was handed over and only the printer's close is missing: a Zebra that keeps the
      // socket open has still printed.
      if (written) resolve({ format: 'application/vnd.zebra-zpl', bytes: zpl.length, pages: labels.length });
      else reject(timedOut('ZPL', budget));
    }, budget);
    socket.on('error', (e) => {
      clearTimeout(timer);
      reject(failureOf(e, 'ZPL'));
    });
    socket.on('data', () => undefined);
    socket.on('close', (hadError) => {
      clearTimeout(timer);
      if (hadError) return;
      if (written) resolve({ format: 'application/vnd.zebra-zpl', bytes: zpl.length, pages: labels.length });
      else
        reject(new PrintFailureError('PRINTER_UNREACHABLE', 'ZPL: the printer closed the connection first'));
    });
    socket.on('connect', () => {
      socket.end(zpl, () => {
        written = true;
      });
    });
  });
