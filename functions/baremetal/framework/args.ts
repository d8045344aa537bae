/**
 * Ironic's argument validators (ironic/common/args.py) with their exact messages, and
 * the JSON-schema wrapper Ironic uses for bodies ("Schema error for <name>: ...").
 */
import { bestMatch } from '../../core/compat/jsonschema.js';
import { iterErrors, type JsonSchema } from '../../core/compat/jsonschema-keywords.js';
import { pyRepr } from '../../core/compat/pyrepr.js';
import { isUuidLike } from '../../core/compat/uuid.js';
import { isValidLogicalName } from '../../core/baremetal/records.js';
import { Err } from '../../core/baremetal/errors.js';

/** Python's '%s' % value */
export function pyStr(v: unknown): string {
  return typeof v === 'string' ? v : pyRepr(v);
}

/** args.schema(...) */
export function validateSchema(name: string, value: unknown, schema: JsonSchema): void {
  if (value === null || value === undefined) return;
  let best = bestMatch(iterErrors(value, schema));
  if (!best) return;
  let msg = `Schema error for ${name}: ${best.message}`;
  let cause: string | undefined;
  while (best.context.length) {
    best = bestMatch(best.context)!;
    cause = best.message;
  }
  if (cause !== undefined) msg += `. Possible root cause: ${cause}`;
  throw Err.invalid(msg);
}

export function stringArg(name: string, v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw Err.invalid(`Expected string for ${name}: ${pyStr(v)}`);
  return v;
}

export function uuidArg(name: string, v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isUuidLike(v)) throw Err.invalid(`Expected UUID for ${name}: ${pyStr(v)}`);
  return v as string;
}

export function uuidOrNameArg(name: string, v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isValidLogicalName(v) && !isUuidLike(v)) throw Err.invalid(`Expected UUID or name for ${name}: ${pyStr(v)}`);
  return v as string;
}

const TRUE = ['1', 't', 'true', 'on', 'y', 'yes'];
const FALSE = ['0', 'f', 'false', 'off', 'n', 'no'];

/** strutils.bool_from_string(strict=True) */
export function boolFromString(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  const s = (typeof v === 'string' ? v : pyStr(v)).trim().toLowerCase();
  if (TRUE.includes(s)) return true;
  if (FALSE.includes(s)) return false;
  const acceptable = [...TRUE, ...FALSE]
    .sort()
    .map((x) => `'${x}'`)
    .join(', ');
  throw new Error(`Unrecognized value '${typeof v === 'string' ? v : pyStr(v)}', acceptable values are: ${acceptable}`);
}

export function booleanArg(name: string, v: unknown): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  try {
    return boolFromString(v);
  } catch (e) {
    throw Err.invalid(`Invalid ${name}: ${(e as Error).message}`);
  }
}

export function integerArg(name: string, v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  const s = typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : '';
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && /^[+-]?\d+$/.test(s)) return Number.parseInt(s, 10);
  throw Err.invalid(`Expected an integer for ${name}: ${pyStr(v)}`);
}

/** comma-separated, lower-cased, de-duplicated */
export function stringListArg(name: string, v: unknown): string[] | undefined {
  const s = stringArg(name, v);
  if (s === undefined) return undefined;
  const out: string[] = [];
  for (const part of s.split(',')) {
    const n = part.trim().toLowerCase();
    if (n && !out.includes(n)) out.push(n);
  }
  return out;
}
