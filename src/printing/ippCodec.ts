/**
 * The IPP message encoding (RFC 8010 §3): a version, an operation or status code, a request id,
 * attribute groups of (value tag, name, value) and the document after them. Written by hand (0051):
 * of the npm packages, `ipp` (last released 2016) has no way to bound or cancel a request and writes
 * to the console, and `ipp-encoder` reads every octet-string value as UTF-8 text, so a resolution
 * such as 203 dpi comes back mangled; what the service needs is these ninety lines.
 */
import { concatBytes, utf8Bytes, utf8Text, viewOf } from './bytes.js';

export const IPP_TAG = {
  operation: 0x01,
  job: 0x02,
  end: 0x03,
  printer: 0x04,
  unsupported: 0x05,
  integer: 0x21,
  boolean: 0x22,
  enum: 0x23,
  resolution: 0x32,
  nameWithoutLanguage: 0x42,
  keyword: 0x44,
  uri: 0x45,
  charset: 0x47,
  naturalLanguage: 0x48,
  mimeMediaType: 0x49,
} as const;

export const IPP_OPERATION = { printJob: 0x0002, getPrinterAttributes: 0x000b } as const;

export interface IppOutAttribute {
  readonly tag: number;
  readonly name: string;
  /** Strings are UTF-8; integers and enums are 32-bit. */
  readonly values: ReadonlyArray<string | number>;
}

export interface IppRequest {
  readonly operation: number;
  readonly requestId: number;
  readonly groups: ReadonlyArray<{
    readonly tag: number;
    readonly attributes: ReadonlyArray<IppOutAttribute>;
  }>;
  readonly document?: Uint8Array;
}

export type IppValue =
  | { readonly kind: 'integer'; readonly value: number }
  | { readonly kind: 'boolean'; readonly value: boolean }
  | { readonly kind: 'resolution'; readonly x: number; readonly y: number; readonly units: number }
  | { readonly kind: 'text'; readonly value: string }
  | { readonly kind: 'other'; readonly tag: number };

export interface IppResponse {
  readonly status: number;
  readonly requestId: number;
  /** Every attribute of every group, by name (a collection's members are skipped). */
  readonly attributes: ReadonlyMap<string, ReadonlyArray<IppValue>>;
}

export const encodeIpp = (req: IppRequest): Uint8Array => {
  const parts: Uint8Array[] = [];
  const head = new Uint8Array(8);
  const h = viewOf(head);
  h.setUint8(0, 2);
  h.setUint8(1, 0);
  h.setUint16(2, req.operation);
  h.setUint32(4, req.requestId);
  parts.push(head);
  for (const group of req.groups) {
    parts.push(Uint8Array.of(group.tag));
    for (const attr of group.attributes) {
      attr.values.forEach((v, i) => {
        const name = utf8Bytes(i === 0 ? attr.name : '');
        let value: Uint8Array;
        if (typeof v === 'number') {
          value = new Uint8Array(4);
          viewOf(value).setInt32(0, v);
        } else value = utf8Bytes(v);
        const lead = new Uint8Array(3);
        lead[0] = attr.tag;
        viewOf(lead).setUint16(1, name.length);
        const valueLength = new Uint8Array(2);
        viewOf(valueLength).setUint16(0, value.length);
        parts.push(lead, name, valueLength, value);
      });
    }
  }
  parts.push(Uint8Array.of(IPP_TAG.end));
  if (req.document !== undefined) parts.push(req.document);
  return concatBytes(parts);
};

export class IppDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IppDecodeError';
  }
}

const decodeValue = (tag: number, bytes: Uint8Array): IppValue => {
  const v = viewOf(bytes);
  if ((tag === IPP_TAG.integer || tag === IPP_TAG.enum) && bytes.length === 4)
    return { kind: 'integer', value: v.getInt32(0) };
  if (tag === IPP_TAG.boolean && bytes.length === 1) return { kind: 'boolean', value: bytes[0] === 1 };
  if (tag === IPP_TAG.resolution && bytes.length === 9)
    return { kind: 'resolution', x: v.getInt32(0), y: v.getInt32(4), units: v.getInt8(8) };
  if (tag >= 0x40 && tag <= 0x4f) return { kind: 'text', value: utf8Text(bytes) };
  return { kind: 'other', tag };
};

/** Decodes a response; anything that is not a whole IPP message is an `IppDecodeError`. */
export const decodeIpp = (buf: Uint8Array): IppResponse => {
  if (buf.length < 9) throw new IppDecodeError('the answer is shorter than an IPP header');
  const view = viewOf(buf);
  const major = view.getUint8(0);
  if (major < 1 || major > 2) throw new IppDecodeError(`IPP version ${major} is not one this service speaks`);
  const status = view.getUint16(2);
  const requestId = view.getUint32(4);
  const attributes = new Map<string, IppValue[]>();
  let offset = 8;
  let current: IppValue[] | undefined;
  let depth = 0;
  const need = (n: number) => {
    if (offset + n > buf.length) throw new IppDecodeError('the answer ends inside an attribute');
  };
  for (;;) {
    need(1);
    const tag = view.getUint8(offset);
    offset += 1;
    if (tag === IPP_TAG.end) break;
    if (tag < 0x10) {
      current = undefined;
      continue;
    }
    need(2);
    const nameLength = view.getUint16(offset);
    offset += 2;
    need(nameLength + 2);
    const name = utf8Text(buf.subarray(offset, offset + nameLength));
    offset += nameLength;
    const valueLength = view.getUint16(offset);
    offset += 2;
    need(valueLength);
    const bytes = buf.subarray(offset, offset + valueLength);
    offset += valueLength;
    // Collections (begCollection 0x34 … endCollection 0x37) are stepped over whole.
    if (tag === 0x34) {
      depth += 1;
      if (depth === 1 && name !== '') {
        current = attributes.get(name) ?? [];
        attributes.set(name, current);
      }
      continue;
    }
    if (tag === 0x37) {
      depth = Math.max(0, depth - 1);
      continue;
    }
    if (depth > 0) continue;
    if (name !== '') {
      current = attributes.get(name) ?? [];
      attributes.set(name, current);
    }
    if (current === undefined) throw new IppDecodeError('an additional value with no attribute before it');
    current.push(decodeValue(tag, bytes));
  }
  return { status, requestId, attributes };
};

/** The text values of an attribute (keywords, MIME types, names). */
export const textsOf = (res: IppResponse, name: string): string[] =>
  (res.attributes.get(name) ?? []).flatMap((v) => (v.kind === 'text' ? [v.value] : []));
