/**
 * A small JSON Schema (2020-12 subset) validator whose failures read like Python's
 * jsonschema 4.x — the library Placement validates with — because clients and the
 * conformance suite match on those messages ("'name' is a required property",
 * "Failed validating 'maximum' in ...", "Additional properties are not allowed (...)").
 * The schemas themselves are generated from the zod definitions in schemas/.
 * It implements the same error selection (jsonschema.exceptions.best_match).
 *
 * This module picks the error to report and renders it; the keywords' checks are in
 * jsonschema-keywords.ts, what a value is (type, format, equality) in jsonschema-values.ts.
 */
import { pyPformat, pyRepr } from './pyrepr.js';
import { iterErrors, type JsonSchema, type SchemaError } from './jsonschema-keywords.js';
import { isType } from './jsonschema-values.js';

const WEAK = new Set(['anyOf', 'oneOf']);
const STRONG = new Set<string>();

function matchesType(e: SchemaError): boolean {
  const t = typeof e.schema === 'object' ? (e.schema as { type?: unknown }).type : undefined;
  if (t === undefined) return false;
  const types: string[] = Array.isArray(t) ? t : [t];
  return types.some((x) => isType(e.instance, x));
}

function relevance(e: SchemaError): number[] {
  return [-e.path.length, WEAK.has(e.validator) ? 0 : 1, STRONG.has(e.validator) ? 1 : 0, matchesType(e) ? 0 : 1];
}

function cmp(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

/** jsonschema.exceptions.best_match */
export function bestMatch(errors: SchemaError[]): SchemaError | undefined {
  if (!errors.length) return undefined;
  let best = errors[0]!;
  for (const e of errors.slice(1)) if (cmp(relevance(e), relevance(best)) > 0) best = e;
  while (best.context.length) {
    const sorted = [...best.context].sort((a, b) => cmp(relevance(a), relevance(b)));
    if (sorted.length >= 2 && cmp(relevance(sorted[0]!), relevance(sorted[1]!)) === 0) return best;
    best = sorted[0]!;
  }
  return best;
}

function formatIndex(word: string, indices: (string | number)[]): string {
  return word + indices.map((i) => `[${pyRepr(i)}]`).join('');
}

const indented = (v: unknown): string => pyPformat(v, 72).split('\n').join('\n    ');

/** str(ValidationError) of Python jsonschema 4.10 (pformat at width 72, continuation lines indented). */
export function formatError(e: SchemaError): string {
  const schemaPath = formatIndex('schema', e.schemaPath.slice(0, -1));
  const instPath = formatIndex('instance', e.path);
  return (
    `${e.message}\n\nFailed validating ${pyRepr(e.validator)} in ${schemaPath}:\n    ${indented(e.schema)}\n\n` +
    `On ${instPath}:\n    ${indented(e.instance)}`
  );
}

export class SchemaValidationError extends Error {
  constructor(readonly error: SchemaError) {
    super(formatError(error));
  }
}

/** Validate; throws SchemaValidationError carrying Python jsonschema's best match. */
export function validate(instance: unknown, schema: JsonSchema): void {
  const best = bestMatch(iterErrors(instance, schema));
  if (best) throw new SchemaValidationError(best);
}
