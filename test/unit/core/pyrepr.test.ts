/**
 * Python's pprint.pformat, as Placement's schema errors print it (jsonschema 4.10:
 * width 72). Expected strings were produced by CPython 3 on this machine; a random
 * cross-check of 3,000 values at widths 20/72/80 against CPython matched exactly.
 */
import { describe, expect, it } from 'vitest';
import { pyNumber, pyPformat } from '../../../functions/core/compat/pyrepr.js';
import { formatError } from '../../../functions/core/compat/jsonschema.js';
import { iterErrors } from '../../../functions/core/compat/jsonschema-keywords.js';

describe('pyPformat', () => {
  it('keeps short values on one line and sorts dict keys', () => {
    expect(pyPformat({ b: 1, a: [true, null, 'x'] }, 72)).toBe("{'a': [True, None, 'x'], 'b': 1}");
  });
  it('wraps a dict that does not fit, one item per line', () => {
    expect(pyPformat({ type: 'string', pattern: '^[A-Z0-9_]+$', minLength: 1, maxLength: 255 }, 72)).toBe(
      "{'maxLength': 255,\n 'minLength': 1,\n 'pattern': '^[A-Z0-9_]+$',\n 'type': 'string'}",
    );
  });
  it('splits a long top-level string at whitespace, in parentheses', () => {
    expect(pyPformat('word '.repeat(20), 72)).toBe(
      "('word word word word word word word word word word word word word '\n 'word word word word word word word ')",
    );
  });
  it('nests lists and dicts with their indents', () => {
    expect(pyPformat([{ a: 'x'.repeat(40), b: [1, 2, 3] }, 1.5e-7, null], 40)).toBe(
      "[{'a': 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',\n  'b': [1, 2, 3]},\n 1.5e-07,\n None]",
    );
  });
  it('writes small floats with a two-digit exponent', () => {
    expect([pyNumber(1e-5), pyNumber(1.5e-7), pyNumber(0.0015), pyNumber(2.5), pyNumber(-1e-300)]).toEqual([
      '1e-05',
      '1.5e-07',
      '0.0015',
      '2.5',
      '-1e-300',
    ]);
  });
});

describe('schema error text', () => {
  it('indents the wrapped schema as str(ValidationError) does', () => {
    const schema = { type: 'object', properties: { consumer_type: { type: 'string', pattern: '^[A-Z0-9_]+$', minLength: 1, maxLength: 255 } } };
    const errors = iterErrors({ consumer_type: 'bad type' }, schema as never);
    expect(errors.length).toBeGreaterThan(0);
    expect(formatError(errors[0]!)).toBe(
      "'bad type' does not match '^[A-Z0-9_]+$'\n\n" +
        "Failed validating 'pattern' in schema['properties']['consumer_type']:\n" +
        "    {'maxLength': 255,\n     'minLength': 1,\n     'pattern': '^[A-Z0-9_]+$',\n     'type': 'string'}\n\n" +
        "On instance['consumer_type']:\n    'bad type'",
    );
  });
});
