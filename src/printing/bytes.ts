/** Building byte strings without Buffer (whose types no longer pass for Uint8Array's here; see src/crypto/bytes.ts). */
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

export const utf8Bytes = (s: string): Uint8Array => utf8.encode(s);
export const utf8Text = (b: Uint8Array): string => fromUtf8.decode(b);

export const concatBytes = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
};

export const viewOf = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);
