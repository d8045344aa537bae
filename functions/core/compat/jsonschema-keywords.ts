/**
 * The keywords of a JSON Schema (2020-12 subset, and draft 4-7's `dependencies`) as
 * Python's jsonschema 4.x checks them: every error a value has against a schema, each
 * with jsonschema's message, validator, paths and context (iter_errors). Which one to
 * report, and how, is in jsonschema.ts. Pure.
 */
import { pyRepr } from './pyrepr.js';
import { deepEqual, FORMATS, isType, pyLen, re } from './jsonschema-values.js';

export type JsonSchema = { [k: string]: unknown } | boolean;

export interface SchemaError {
  message: string;
  validator: string; // keyword that failed
  validatorValue: unknown;
  path: (string | number)[]; // instance path (relative to root)
  schemaPath: (string | number)[];
  schema: JsonSchema;
  instance: unknown;
  context: SchemaError[];
}

function mk(
  message: string,
  validator: string,
  validatorValue: unknown,
  schema: JsonSchema,
  instance: unknown,
  context: SchemaError[] = [],
): SchemaError {
  return { message, validator, validatorValue, path: [], schemaPath: [], schema, instance, context };
}

function descend(instance: unknown, schema: JsonSchema, path: string | number | undefined, schemaPath: string | number | undefined): SchemaError[] {
  const errs = iterErrors(instance, schema);
  for (const e of errs) {
    if (path !== undefined) e.path.unshift(path);
    if (schemaPath !== undefined) e.schemaPath.unshift(schemaPath);
  }
  return errs;
}

export function iterErrors(instance: unknown, schema: JsonSchema): SchemaError[] {
  if (schema === true) return [];
  if (schema === false) return [mk(`False schema does not allow ${pyRepr(instance)}`, 'false', false, schema, instance)];
  const out: SchemaError[] = [];
  for (const [k, v] of Object.entries(schema)) {
    const sub = keyword(k, v, instance, schema);
    for (const e of sub) {
      e.schemaPath.unshift(k);
      out.push(e);
    }
  }
  return out;
}

// biome-ignore lint/suspicious/noExplicitAny: a keyword's value is whatever JSON the schema holds there; each case narrows it
function keyword(k: string, v: any, instance: unknown, schema: { [k: string]: unknown }): SchemaError[] {
  const errs: SchemaError[] = [];
  const push = (msg: string) => errs.push(mk(msg, k, v, schema, instance));
  switch (k) {
    case 'type': {
      const types: string[] = Array.isArray(v) ? v : [v];
      if (!types.some((t) => isType(instance, t))) push(`${pyRepr(instance)} is not of type ${types.map((t) => pyRepr(t)).join(', ')}`);
      break;
    }
    case 'properties': {
      if (!isType(instance, 'object')) break;
      for (const [p, sub] of Object.entries(v as object)) {
        if (Object.hasOwn(instance as object, p)) {
          errs.push(...descend((instance as Record<string, unknown>)[p], sub as JsonSchema, p, p));
        }
      }
      break;
    }
    case 'patternProperties': {
      if (!isType(instance, 'object')) break;
      for (const [pat, sub] of Object.entries(v as object)) {
        for (const [key, val] of Object.entries(instance as object)) {
          if (re(pat).test(key)) errs.push(...descend(val, sub as JsonSchema, key, pat));
        }
      }
      break;
    }
    case 'dependencies': {
      // draft 4-7: a present property needs others (a list) or its object to match (a schema)
      if (!isType(instance, 'object')) break;
      for (const [prop, dep] of Object.entries(v as Record<string, unknown>)) {
        if (!Object.hasOwn(instance as object, prop)) continue;
        if (Array.isArray(dep)) {
          for (const each of dep) if (!Object.hasOwn(instance as object, each)) push(`${pyRepr(each)} is a dependency of ${pyRepr(prop)}`);
        } else errs.push(...descend(instance, dep as JsonSchema, undefined, prop));
      }
      break;
    }
    case 'propertyNames': {
      if (!isType(instance, 'object')) break;
      for (const key of Object.keys(instance as object)) errs.push(...descend(key, v as JsonSchema, undefined, undefined));
      break;
    }
    case 'additionalProperties': {
      if (!isType(instance, 'object')) break;
      const props = (schema.properties as object | undefined) ?? {};
      const pats = Object.keys((schema.patternProperties as object | undefined) ?? {});
      const extras = Object.keys(instance as object).filter((key) => !Object.hasOwn(props, key) && !pats.some((p) => re(p).test(key)));
      if (typeof v === 'object' && v !== null) {
        for (const e of extras) errs.push(...descend((instance as Record<string, unknown>)[e], v as JsonSchema, e, undefined));
      } else if (v === false && extras.length) {
        if (schema.patternProperties) {
          const verb = extras.length === 1 ? 'does' : 'do';
          const joined = [...extras]
            .sort()
            .map((e) => pyRepr(e))
            .join(', ');
          const patterns = pats
            .sort()
            .map((p) => pyRepr(p))
            .join(', ');
          push(`${joined} ${verb} not match any of the regexes: ${patterns}`);
        } else {
          const verb = extras.length === 1 ? 'was' : 'were';
          push(
            `Additional properties are not allowed (${[...extras]
              .sort()
              .map((e) => pyRepr(e))
              .join(', ')} ${verb} unexpected)`,
          );
        }
      }
      break;
    }
    case 'required': {
      if (!isType(instance, 'object')) break;
      for (const p of v as string[]) {
        if (!Object.hasOwn(instance as object, p)) push(`${pyRepr(p)} is a required property`);
      }
      break;
    }
    case 'minProperties':
      if (isType(instance, 'object') && Object.keys(instance as object).length < v) push(`${pyRepr(instance)} does not have enough properties`);
      break;
    case 'maxProperties':
      if (isType(instance, 'object') && Object.keys(instance as object).length > v) push(`${pyRepr(instance)} has too many properties`);
      break;
    case 'items': {
      if (!Array.isArray(instance)) break;
      if (v === false) {
        if (instance.length) push(`Expected at most 0 items, but found ${instance.length}`);
        break;
      }
      for (const [i, item] of instance.entries()) errs.push(...descend(item, v as JsonSchema, i, undefined));
      break;
    }
    case 'minItems':
      if (Array.isArray(instance) && instance.length < v) push(`${pyRepr(instance)} is too short`);
      break;
    case 'maxItems':
      if (Array.isArray(instance) && instance.length > v) push(`${pyRepr(instance)} is too long`);
      break;
    case 'uniqueItems':
      if (v && Array.isArray(instance)) {
        const dup = instance.some((x, i) => instance.findIndex((y) => deepEqual(x, y)) !== i);
        if (dup) push(`${pyRepr(instance)} has non-unique elements`);
      }
      break;
    case 'minLength':
      if (typeof instance === 'string' && pyLen(instance) < v) push(`${pyRepr(instance)} is too short`);
      break;
    case 'maxLength':
      if (typeof instance === 'string' && pyLen(instance) > v) push(`${pyRepr(instance)} is too long`);
      break;
    case 'pattern':
      if (typeof instance === 'string' && !re(v).test(instance)) push(`${pyRepr(instance)} does not match ${pyRepr(v)}`);
      break;
    case 'format': {
      const check = FORMATS[v as string];
      if (check && typeof instance === 'string' && !check(instance)) push(`${pyRepr(instance)} is not a ${pyRepr(v)}`);
      break;
    }
    case 'enum':
      if (!(v as unknown[]).some((x) => deepEqual(x, instance) && typeof x === typeof instance))
        push(`${pyRepr(instance)} is not one of ${pyRepr(v)}`);
      break;
    case 'const':
      if (!deepEqual(v, instance)) push(`${pyRepr(v)} was expected`);
      break;
    case 'minimum':
      if (typeof instance === 'number' && instance < v) push(`${pyRepr(instance)} is less than the minimum of ${pyRepr(v)}`);
      break;
    case 'maximum':
      if (typeof instance === 'number' && instance > v) push(`${pyRepr(instance)} is greater than the maximum of ${pyRepr(v)}`);
      break;
    case 'exclusiveMinimum':
      if (typeof instance === 'number' && instance <= v) push(`${pyRepr(instance)} is less than or equal to the minimum of ${pyRepr(v)}`);
      break;
    case 'exclusiveMaximum':
      if (typeof instance === 'number' && instance >= v) push(`${pyRepr(instance)} is greater than or equal to the maximum of ${pyRepr(v)}`);
      break;
    case 'allOf':
      for (const [i, sub] of (v as JsonSchema[]).entries()) errs.push(...descend(instance, sub, undefined, i));
      break;
    case 'anyOf':
    case 'oneOf': {
      const all: SchemaError[] = [];
      let matched = -1;
      (v as JsonSchema[]).some((sub, i) => {
        const e = descend(instance, sub, undefined, i);
        if (!e.length) {
          matched = i;
          return true;
        }
        all.push(...e);
        return false;
      });
      if (matched < 0) {
        errs.push(mk(`${pyRepr(instance)} is not valid under any of the given schemas`, k, v, schema, instance, all));
      } else if (k === 'oneOf') {
        const more = (v as JsonSchema[]).filter((sub, i) => i > matched && iterErrors(instance, sub).length === 0);
        if (more.length) {
          more.push((v as JsonSchema[])[matched]!);
          push(`${pyRepr(instance)} is valid under each of ${more.map((m) => pyRepr(m)).join(', ')}`);
        }
      }
      break;
    }
    case 'not':
      if (iterErrors(instance, v as JsonSchema).length === 0) push(`${pyRepr(instance)} should not be valid under ${pyRepr(v)}`);
      break;
    default:
      break; // annotations ($schema, description, title, ...) and unsupported keywords
  }
  return errs;
}
