/**
 * Reading an answer as a tolerant reader: the `src/domain` codecs are closed (an unknown field fails
 * the decode, which is what the server wants of a request), but a kiosk kept in a tablet's cache, or an
 * office tab left open across an upgrade, meets a newer server that may have added a field. When an
 * answer does not decode, the fields its codec does not name are left out, following the codec's
 * structure, and it is decoded again. Anything else a codec refuses (a value of the wrong type, an
 * enumeration's new value) still fails: the client could not use it.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { ObjectType } from '../domain/codec.js';

const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === 'object' && u !== null && !Array.isArray(u);

const withProps = (
  value: Record<string, unknown>,
  props: Readonly<Record<string, t.Mixed>>,
  closed: boolean,
): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const codec = props[key];
    if (codec !== undefined) out[key] = known(codec, item);
    else if (!closed) out[key] = item;
  }
  return out;
};

/** `value` with only what `codec` names, as far as its structure tells; never changed in place. */
const known = (codec: t.Mixed, value: unknown): unknown => {
  if (codec instanceof ObjectType)
    return isRecord(value) ? withProps(value, { ...codec.optional, ...codec.required }, true) : value;
  if (codec instanceof t.InterfaceType || codec instanceof t.PartialType)
    return isRecord(value) ? withProps(value, codec.props, false) : value;
  if (codec instanceof t.ArrayType)
    return Array.isArray(value) ? value.map((v) => known(codec.type, v)) : value;
  if (codec instanceof t.RefinementType || codec instanceof t.ReadonlyType || codec instanceof t.ExactType)
    return known(codec.type, value);
  if (codec instanceof t.UnionType) {
    // The first member the value fits once its unknown fields are left out.
    for (const member of codec.types) {
      const candidate = known(member, value);
      if (E.isRight(member.decode(candidate))) return candidate;
    }
    return value;
  }
  if (codec instanceof t.IntersectionType) {
    if (!isRecord(value)) return value;
    // Each member keeps what it names; together, what any of them names.
    return Object.assign({}, ...codec.types.map((member: t.Mixed) => known(member, value)));
  }
  return value;
};

export const decodeLenient = <A, O>(codec: t.Type<A, O, unknown>, value: unknown): E.Either<t.Errors, A> => {
  const first = codec.decode(value);
  return E.isRight(first) ? first : codec.decode(known(codec, value));
};
