/**
 * zod is where every request schema is written; this turns a zod schema into the
 * JSON Schema our validator (functions/core/compat/jsonschema.ts) checks, and the OpenAPI
 * build publishes. Placement-exact shapes that zod cannot express directly
 * (patternProperties maps) are attached with `exact(...)`.
 */
import * as z from 'zod';
import type { JsonSchema } from '../functions/core/compat/jsonschema-keywords.js';

const EXACT = new WeakMap<z.ZodType, Record<string, unknown>>();
const CACHE = new WeakMap<z.ZodType, JsonSchema>();

/** Use `json` verbatim as this schema's JSON Schema (zod still types the value). */
export function exact<T extends z.ZodType>(schema: T, json: Record<string, unknown>): T {
  EXACT.set(schema, json);
  return schema;
}

/** A string in oslo's "uuid-like" format. */
export const uuidString = () => z.string().meta({ format: 'uuid' });

const SAFE = Number.MAX_SAFE_INTEGER;

export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const hit = CACHE.get(schema);
  if (hit) return hit;
  const out = z.toJSONSchema(schema, {
    unrepresentable: 'any',
    io: 'input',
    override: (ctx) => {
      const ex = EXACT.get(ctx.zodSchema as unknown as z.ZodType);
      const js = ctx.jsonSchema as Record<string, unknown>;
      if (ex) {
        for (const k of Object.keys(js)) delete js[k];
        Object.assign(js, structuredClone(ex));
        return;
      }
      // zod adds the safe-integer range to every z.int(); Placement's schemas do not
      if (js.minimum === -SAFE) delete js.minimum;
      if (js.maximum === SAFE) delete js.maximum;
    },
  }) as Record<string, unknown>;
  delete out.$schema;
  CACHE.set(schema, out);
  return out;
}
