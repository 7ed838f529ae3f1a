/**
 * io-ts codec → JSON Schema 2020-12 (the dialect of OpenAPI 3.1). Codecs named with a `title` become
 * components referenced by `$ref`; annotations from `SchemaMeta` add formats, bounds and the LGPD
 * classification (`x-classification`). An unsupported codec is a programming error and throws.
 */
import * as t from 'io-ts';
import { BytesType, metaOf, ObjectType, type SchemaMeta, StreamType } from '../../domain/codec.js';

export type JsonSchema = { [key: string]: unknown };

export class SchemaRegistry {
  readonly components: Record<string, JsonSchema> = {};
  private readonly owners = new Map<string, t.Mixed>();

  ref(codec: t.Mixed): JsonSchema {
    return toSchema(codec, this);
  }

  /** Registers a named schema once; the same title on two different codecs is a bug. */
  named(title: string, codec: t.Mixed, build: () => JsonSchema): JsonSchema {
    const owner = this.owners.get(title);
    if (owner !== undefined && owner !== codec)
      throw new Error(`two different codecs are both named ${title}`);
    if (owner === undefined) {
      this.owners.set(title, codec);
      this.components[title] = build();
    }
    return { $ref: `#/components/schemas/${title}` };
  }
}

const metaKeywords = (meta: SchemaMeta | undefined): JsonSchema => {
  if (meta === undefined) return {};
  const out: JsonSchema = {};
  const copy = [
    'description',
    'format',
    'pattern',
    'minLength',
    'maxLength',
    'minimum',
    'maximum',
    'minItems',
    'maxItems',
  ] as const;
  for (const k of copy) if (meta[k] !== undefined) out[k] = meta[k];
  if (meta.examples !== undefined) out.examples = [...meta.examples];
  if (meta.readOnly === true) out.readOnly = true;
  if (meta.deprecated === true) out.deprecated = true;
  if (meta.classification !== undefined) out['x-classification'] = meta.classification;
  if (meta.integer === true) {
    out.type = 'integer';
    // The codec's own bounds say which width holds it (unbounded: int64, as JSON numbers go).
    const within32 =
      meta.minimum !== undefined &&
      meta.maximum !== undefined &&
      meta.minimum >= -(2 ** 31) &&
      meta.maximum < 2 ** 31;
    out.format ??= within32 ? 'int32' : 'int64';
  }
  return out;
};

const objectSchema = (
  required: Record<string, t.Mixed>,
  optional: Record<string, t.Mixed>,
  reg: SchemaRegistry,
): JsonSchema => {
  const properties: Record<string, JsonSchema> = {};
  for (const [k, c] of Object.entries(required)) properties[k] = toSchema(c, reg);
  for (const [k, c] of Object.entries(optional)) properties[k] = toSchema(c, reg);
  const requiredKeys = Object.keys(required);
  return {
    type: 'object',
    properties,
    ...(requiredKeys.length > 0 ? { required: requiredKeys } : {}),
    additionalProperties: false,
  };
};

const structural = (codec: t.Mixed, reg: SchemaRegistry): JsonSchema => {
  if (codec instanceof ObjectType) return objectSchema(codec.required, codec.optional, reg);
  if (codec instanceof BytesType)
    return { type: 'string', maxLength: codec.maxBytes, description: codec.description };
  if (codec instanceof StreamType) return { type: 'string', description: codec.description };
  if (codec instanceof t.StringType) return { type: 'string' };
  if (codec instanceof t.NumberType) return { type: 'number' };
  if (codec instanceof t.BooleanType) return { type: 'boolean' };
  if (codec instanceof t.NullType) return { type: 'null' };
  if (codec instanceof t.UnknownType) return {};
  if (codec instanceof t.AnyDictionaryType) return { type: 'object' };
  if (codec instanceof t.LiteralType) return { const: codec.value };
  if (codec instanceof t.KeyofType) return { type: 'string', enum: Object.keys(codec.keys) };
  if (codec instanceof t.ArrayType || codec instanceof t.ReadonlyArrayType) {
    return { type: 'array', items: toSchema(codec.type, reg) };
  }
  if (codec instanceof t.UnionType) {
    const members: t.Mixed[] = codec.types;
    if (members.every((m) => m instanceof t.LiteralType)) {
      return { enum: members.map((m) => (m instanceof t.LiteralType ? m.value : null)) };
    }
    return { anyOf: members.map((m) => toSchema(m, reg)) };
  }
  if (codec instanceof t.IntersectionType) {
    const members: t.Mixed[] = codec.types;
    return { allOf: members.map((m) => toSchema(m, reg)) };
  }
  if (codec instanceof t.InterfaceType) return objectSchema(codec.props, {}, reg);
  if (codec instanceof t.PartialType) return objectSchema({}, codec.props, reg);
  if (codec instanceof t.ExactType || codec instanceof t.ReadonlyType) return toSchema(codec.type, reg);
  if (codec instanceof t.DictionaryType)
    return { type: 'object', additionalProperties: toSchema(codec.codomain, reg) };
  if (codec instanceof t.RefinementType) {
    const inner = toSchema(codec.type, reg);
    return codec.name === 'Int' ? { ...inner, type: 'integer' } : inner;
  }
  throw new Error(`no JSON Schema mapping for codec ${codec.name}`);
};

export const toSchema = (codec: t.Mixed, reg: SchemaRegistry): JsonSchema => {
  const meta = metaOf(codec);
  const build = (): JsonSchema => ({ ...structural(codec, reg), ...metaKeywords(meta) });
  return meta?.title === undefined
    ? build()
    : reg.named(meta.title, codec, () => ({ title: meta.title, ...build() }));
};
