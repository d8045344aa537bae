/**
 * fast-check arbitraries for the HTTP fuzz suites: documents derived from the JSON
 * Schemas the handlers validate against (mostly valid, then mutated), the edge-case
 * values bad input is made of (lone surrogates, integers past 2^31 and 2^53, huge
 * strings), query strings with duplicate and unknown keys, and raw byte bodies.
 */
import fc from 'fast-check';

type Json = unknown;
type Schema = Record<string, any>;

/** Values a schema's strings may be drawn from, keyed by what the schema asks for. */
export interface Pools {
  /** existing ids (providers, consumers, nodes, allocations) and random uuids */
  uuid: fc.Arbitrary<string>;
  /** resource classes and other `^[A-Z0-9_]+$` names (standard + fixture customs) */
  upper: fc.Arbitrary<string>;
  /** `^CUSTOM_...` names */
  custom: fc.Arbitrary<string>;
  /** anything else a valid document may contain */
  text: fc.Arbitrary<string>;
}

export const LONE_SURROGATES = ['\ud800', 'a\udc00b', '\udfff', 'x\ud83d'];
export const UNICODE_EDGE = [
  '',
  ' ',
  '\u0000',
  'é',
  '\u202e',
  '\ufeff',
  '😀',
  '𝔘',
  'a'.repeat(256),
  '\u00ff',
  '%',
  '%zz',
  '../..',
  '\\',
  '"',
  "'",
  '<script>',
];

/** Strings bad input is made of. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...LONE_SURROGATES, ...UNICODE_EDGE) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 1, arbitrary: fc.integer({ min: 256, max: 70_000 }).map((n) => 'x'.repeat(n)) },
);

/** Integers around every boundary a handler or DynamoDB might mishandle. */
export const edgeInt: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    0,
    -1,
    1,
    2147483647,
    2147483648,
    -2147483648,
    -2147483649,
    4294967296,
    2 ** 53 - 1,
    2 ** 53,
    2 ** 53 + 2,
    -(2 ** 53),
    1e21,
    1e300,
    -1e300,
  ),
  fc.integer({ min: -2_147_483_648, max: 2_147_483_647 }),
  fc.double({ noNaN: true }),
);

/** Any JSON value, small. */
export const anyJson: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    edgeInt,
    nastyString,
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(nastyString, tie('v'), { maxKeys: 3 }),
  ),
})).v;

/** Markers a renderer turns into raw JSON text JSON.stringify cannot produce. */
export const RAW_NUMBERS = ['123456789012345678901234567890', '1e400', '-1e400', '1.0', '1e2', '-0', '2147483648.0', '9007199254740993'];
const RAW_MARK = '\u0001RAW\u0001';
export const rawNumber = fc.constantFrom(...RAW_NUMBERS).map((s) => `${RAW_MARK}${s}${RAW_MARK}`);

export function renderJson(doc: Json): string {
  const s = JSON.stringify(doc) ?? 'null';
  return s.replace(/"\\u0001RAW\\u0001([^"]*)\\u0001RAW\\u0001"/g, '$1');
}

function resolve(root: Schema, s: Schema): Schema {
  if (s && typeof s.$ref === 'string') {
    const parts = s.$ref.replace(/^#\//, '').split('/');
    let cur: any = root;
    for (const p of parts) cur = cur?.[p];
    return resolve(root, cur ?? {});
  }
  return s ?? {};
}

function stringFor(s: Schema, pools: Pools): fc.Arbitrary<string> {
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as string[]));
  const pattern = String(s.pattern ?? '');
  if (s.format === 'uuid' || /\{36\}|[0-9a-fA-F]\{8\}/.test(pattern)) return pools.uuid;
  if (pattern.includes('CUSTOM_')) return pools.custom;
  if (pattern.includes('A-Z0-9_')) return pools.upper;
  return pools.text;
}

function intFor(s: Schema): fc.Arbitrary<number> {
  const min = typeof s.minimum === 'number' ? s.minimum : -10;
  const max = typeof s.maximum === 'number' ? s.maximum : 10_000;
  return fc.oneof({ weight: 4, arbitrary: fc.integer({ min: Math.max(min, -1e9), max: Math.min(max, 1e9) }) }, fc.constantFrom(min, max));
}

/** A document that (mostly) validates against `schema`. */
export function fromSchema(schema: Schema, pools: Pools, root: Schema = schema, depth = 0): fc.Arbitrary<Json> {
  const s = resolve(root, schema);
  if (depth > 6) return fc.constant(null);
  const alts = s.anyOf ?? s.oneOf;
  if (Array.isArray(alts) && alts.length)
    return fc.oneof(...alts.map((a: Schema) => fromSchema({ ...s, anyOf: undefined, oneOf: undefined, ...a }, pools, root, depth + 1)));
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  const types: string[] = Array.isArray(s.type)
    ? s.type
    : s.type
      ? [s.type]
      : s.properties || s.patternProperties
        ? ['object']
        : ['string', 'integer', 'object'];
  return fc.oneof(...types.map((t) => typed(t, s, pools, root, depth)));
}

function typed(t: string, s: Schema, pools: Pools, root: Schema, depth: number): fc.Arbitrary<Json> {
  switch (t) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return intFor(s);
    case 'number':
      return fc.oneof(intFor(s), fc.double({ min: 0, max: 100, noNaN: true }));
    case 'string':
      return stringFor(s, pools);
    case 'array': {
      const item = s.items && typeof s.items === 'object' && !Array.isArray(s.items) ? fromSchema(s.items, pools, root, depth + 1) : anyJson;
      const minLength = s.minItems ?? 0;
      return fc.array(item, { minLength, maxLength: Math.max(minLength, Math.min(s.maxItems ?? 4, 4)) });
    }
    case 'object': {
      const props: Record<string, Schema> = s.properties ?? {};
      const required = new Set<string>(s.required ?? []);
      const known = fc.record(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, fromSchema(v, pools, root, depth + 1)])), {
        requiredKeys: [...required].filter((k) => k in props),
      });
      const patterned = Object.entries((s.patternProperties ?? {}) as Record<string, Schema>).map(([p, v]) =>
        fc.dictionary(stringFor({ pattern: p }, pools), fromSchema(v, pools, root, depth + 1), { minKeys: s.minProperties ? 1 : 0, maxKeys: 3 }),
      );
      const extra =
        s.additionalProperties && typeof s.additionalProperties === 'object'
          ? [fc.dictionary(pools.text, fromSchema(s.additionalProperties, pools, root, depth + 1), { maxKeys: 2 })]
          : [];
      return fc.tuple(known, ...patterned, ...extra).map((parts) => Object.assign({}, ...parts.reverse()));
    }
    default:
      return anyJson;
  }
}

/** Replace one node of a document (chosen by `path`, a list of indices) with `v`. */
function mutateAt(doc: Json, path: number[], f: (x: Json) => Json): Json {
  if (!path.length || doc === null || typeof doc !== 'object') return f(doc);
  const [i, ...rest] = path;
  if (Array.isArray(doc)) {
    if (!doc.length) return f(doc);
    const k = i! % doc.length;
    const copy = doc.slice();
    copy[k] = mutateAt(doc[k], rest, f);
    return copy;
  }
  const keys = Object.keys(doc as object);
  if (!keys.length) return f(doc);
  const k = keys[i! % keys.length]!;
  return { ...(doc as object), [k]: mutateAt((doc as Record<string, Json>)[k], rest, f) };
}

const mutation: fc.Arbitrary<(x: Json) => Json> = fc.oneof(
  anyJson.map((v) => () => v),
  edgeInt.map((v) => () => v),
  rawNumber.map((v) => () => v),
  fc.constantFrom(...LONE_SURROGATES).map((v) => () => v),
  fc.constant((x: Json) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).slice(1)) : x)),
  fc.tuple(nastyString, anyJson).map(
    ([k, v]) =>
      (x: Json) =>
        x && typeof x === 'object' && !Array.isArray(x) ? { ...x, [k]: v } : [x, v],
  ),
  fc.constant((x: Json) => [x]),
  fc.constant((x: Json) => (typeof x === 'string' ? `${x}\ud800` : (JSON.stringify(x) ?? 'null'))),
);

/** A schema-derived document, then 0–2 mutations. */
export function bodyDoc(schemas: Schema[], pools: Pools): fc.Arbitrary<Json> {
  const base = schemas.length ? fc.oneof(...schemas.map((s) => fromSchema(s, pools))) : anyJson;
  return fc
    .tuple(
      base,
      fc.oneof(
        { weight: 1, arbitrary: fc.constant([] as Array<[number[], (x: Json) => Json]>) },
        { weight: 1, arbitrary: fc.array(fc.tuple(fc.array(fc.nat(), { maxLength: 4 }), mutation), { minLength: 1, maxLength: 2 }) },
      ),
    )
    .map(([doc, muts]) => muts.reduce((d, [path, f]) => mutateAt(d, path, f), doc));
}

/** Raw request bodies: the JSON text of a document, or bytes no parser should accept. */
export function rawBody(schemas: Schema[], pools: Pools): fc.Arbitrary<Buffer | undefined> {
  return fc.oneof(
    { weight: 12, arbitrary: bodyDoc(schemas, pools).map((d) => Buffer.from(renderJson(d), 'utf8')) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(
          '',
          '{',
          '{"a":',
          'null',
          '[]',
          '"x"',
          '{"name": "\\ud800"}',
          '{"a": 1, "a": 2}',
          'NaN',
          '{"x": Infinity}',
          '\ufeff{}',
          '{}garbage',
          '['.repeat(5000) + ']'.repeat(5000),
        )
        .map((s) => Buffer.from(s, 'utf8')),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), Buffer.from([0xed, 0xa0, 0x80])),
    },
  );
}

/** One percent-encoded path segment: a pool value, or anything (including invalid UTF-8). */
export function pathSegment(valid: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 8, arbitrary: valid.map(encodeSegment) },
    { weight: 2, arbitrary: nastyString.map(encodeSegment) },
    { weight: 1, arbitrary: fc.constantFrom('%ED%A0%80', '%FF', '%C0%AF', '%00', '%2F', '%', '%%', '..', '.', 'a%20b') },
    { weight: 1, arbitrary: fc.integer({ min: 200, max: 3000 }).map((n) => 'a'.repeat(n)) },
  );
}

/** encodeURIComponent that survives lone surrogates (encoded as their WTF-8 bytes). */
export function encodeSegment(s: string): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff)
      out += `%${(0xe0 | (cp >> 12)).toString(16)}%${(0x80 | ((cp >> 6) & 0x3f)).toString(16)}%${(0x80 | (cp & 0x3f)).toString(16)}`.toUpperCase();
    else out += encodeURIComponent(ch);
  }
  return out;
}

/** A query string over `keys` (known keys, with values), duplicates and unknown keys included. */
export function queryString(keys: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<string> {
  const names = Object.keys(keys);
  const pair = fc.oneof(
    ...(names.length ? [{ weight: 8, arbitrary: fc.constantFrom(...names).chain((k) => keys[k]!.map((v) => [k, v] as const)) }] : []),
    { weight: 1, arbitrary: fc.tuple(nastyString, nastyString) },
  );
  return fc.oneof(
    { weight: 10, arbitrary: fc.array(pair, { maxLength: 4 }).map((ps) => ps.map(([k, v]) => `${encodeSegment(k)}=${encodeSegment(v)}`).join('&')) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('a=%FF', 'a=%ED%A0%80', '&&&', '=', 'a', '%', 'a=1&a=2', 'a=' + 'x'.repeat(9000), 'a=' + 'x'.repeat(20000)),
    },
  );
}

/** Header values node's client can send (latin-1 printable), some of them odd. */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 30 }),
  fc.constantFrom('', ' ', 'é', '\u00ff', 'x'.repeat(3000)),
);
