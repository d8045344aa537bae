/**
 * JSON values as Python's jsonschema sees them: the JSON type of a value, the formats it
 * checks, equality of two values, a string's length in code points, the pattern regexes
 * (cached). Pure.
 */
import { isUuidLike } from './uuid.js';

export type FormatChecker = (value: unknown) => boolean;

export const FORMATS: Record<string, FormatChecker> = {
  uuid: isUuidLike,
};

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

export function isType(v: unknown, t: string): boolean {
  switch (t) {
    case 'object':
      return typeOf(v) === 'object';
    case 'array':
      return Array.isArray(v);
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
    case 'null':
      return v === null;
    default:
      return false;
  }
}
/** len() of a Python str */
export function pyLen(s: string): number {
  // Python counts code points, not UTF-16 units.
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** equal as JSON values */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (typeof a === 'object') {
    const ka = Object.keys(a as object);
    const kb = Object.keys(b as object);
    return ka.length === kb.length && ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return false;
}

/** a schema pattern as a (cached) regex */
const regexCache = new Map<string, RegExp>();
export function re(p: string): RegExp {
  let r = regexCache.get(p);
  if (!r) {
    r = new RegExp(p, 'u');
    regexCache.set(p, r);
  }
  return r;
}
