import { describe, expect, it } from 'vitest';
import { pyDumps } from '../../../functions/baremetal/framework/pyjson.js';
import { checkVersion, parseVersionHeader } from '../../../functions/baremetal/framework/versions.js';
import { WebobError, faultResponse, webobResponse } from '../../../functions/baremetal/framework/errors.js';
import { IronicError } from '../../../functions/core/baremetal/errors.js';
import { applyPatch, patchFields, validatePatch } from '../../../functions/baremetal/framework/jsonpatch.js';
import { booleanArg, integerArg, stringListArg, uuidOrNameArg, validateSchema } from '../../../functions/baremetal/framework/args.js';
import { ALLOCATION_JSON } from '../../../schemas/baremetal/allocations.js';
import { maskDictPassword } from '../../../functions/baremetal/views.js';

function throwsIronic(fn: () => unknown): IronicError {
  try {
    fn();
  } catch (e) {
    if (e instanceof IronicError) return e;
    throw e;
  }
  throw new Error('did not throw');
}

describe("Python's json.dumps", () => {
  it('uses its separators and escapes non-ASCII', () => {
    expect(pyDumps({ a: [1, 'x'], b: null, c: true })).toBe('{"a": [1, "x"], "b": null, "c": true}');
    expect(pyDumps('é"\n')).toBe('"\\u00e9\\"\\n"');
  });
});

describe('version negotiation', () => {
  it('parses like base.Version.parse_headers', () => {
    expect(parseVersionHeader(undefined)).toEqual({ major: 1, minor: 1 });
    expect(parseVersionHeader('latest')).toEqual({ major: 1, minor: 80 });
    expect(parseVersionHeader(' 1.52 ')).toEqual({ major: 1, minor: 52 });
    for (const bad of ['abc', '1', '1.2.3', '1.x', '']) {
      expect(() => parseVersionHeader(bad), bad).toThrow(WebobError);
    }
  });
  it('refuses 1.0, 1.81 and 2.x with 406 and the range headers', () => {
    for (const v of [
      { major: 1, minor: 0 },
      { major: 1, minor: 81 },
      { major: 2, minor: 1 },
    ]) {
      try {
        checkVersion(v);
        throw new Error('accepted');
      } catch (e) {
        expect(e).toBeInstanceOf(WebobError);
        expect((e as WebobError).status).toBe(406);
        expect((e as WebobError).headers['x-openstack-ironic-api-maximum-version']).toBe('1.80');
      }
    }
    expect(() => checkVersion({ major: 1, minor: 80 })).not.toThrow();
  });
});

describe('error bodies', () => {
  it('wraps faults and webob errors in error_message as Ironic does', () => {
    const f = faultResponse(new IronicError(404, 'Node x could not be found.'));
    expect(f.body).toBe(
      '{"error_message": "{\\"faultcode\\": \\"Client\\", \\"faultstring\\": \\"Node x could not be found.\\", \\"debuginfo\\": null}"}',
    );
    const w = webobResponse(new WebobError(405));
    expect(JSON.parse(JSON.parse(w.body!).error_message)).toEqual({ code: 405, title: 'Method Not Allowed', description: '' });
    expect(JSON.parse(JSON.parse(faultResponse(new IronicError(500, 'boom')).body!).error_message).faultcode).toBe('Server');
  });
});

describe('argument validators (ironic.common.args)', () => {
  it('booleans accept strutils strings only', () => {
    expect(booleanArg('m', 'Yes')).toBe(true);
    expect(booleanArg('m', false)).toBe(false);
    expect(throwsIronic(() => booleanArg('maintenance', 'maybe')).faultstring).toBe(
      "Invalid maintenance: Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'",
    );
  });
  it('integers, lists and names', () => {
    expect(integerArg('limit', '10')).toBe(10);
    expect(throwsIronic(() => integerArg('limit', 'x')).faultstring).toBe('Expected an integer for limit: x');
    expect(stringListArg('fields', 'UUID, name,uuid,')).toEqual(['uuid', 'name']);
    expect(throwsIronic(() => uuidOrNameArg('node', 'a b')).faultstring).toBe('Expected UUID or name for node: a b');
  });
  it('reports schema errors with the possible root cause', () => {
    expect(throwsIronic(() => validateSchema('allocation', { resource_class: 'x', traits: ['bad'] }, ALLOCATION_JSON as never)).faultstring).toBe(
      "Schema error for allocation: 'bad' is not valid under any of the given schemas. Possible root cause: 'bad' does not match '^CUSTOM_[A-Z0-9_]+$'",
    );
    expect(() =>
      validateSchema('allocation', { resource_class: 'x', traits: ['CUSTOM_OK', 'HW_CPU_X86_AVX'] }, ALLOCATION_JSON as never),
    ).not.toThrow();
  });
});

describe('JSON patch', () => {
  const doc = { name: 'a', extra: { k: 1 }, list: [1, 2] };
  it('applies add/replace/remove, one op at a time', () => {
    expect(
      applyPatch(doc, [
        { op: 'add', path: '/extra/n', value: { x: 1 } },
        { op: 'replace', path: '/name', value: 'b' },
        { op: 'remove', path: '/extra/k' },
        { op: 'add', path: '/list/-', value: 3 },
      ]),
    ).toEqual({ name: 'b', extra: { n: { x: 1 } }, list: [1, 2, 3] });
    expect(doc).toEqual({ name: 'a', extra: { k: 1 }, list: [1, 2] });
  });
  it('words failures like python-jsonpatch and refuses new root attributes', () => {
    expect(throwsIronic(() => applyPatch(doc, [{ op: 'remove', path: '/extra/nope' }])).faultstring).toBe(
      "Couldn't apply patch '{'op': 'remove', 'path': '/extra/nope'}'. Reason: can't remove a non-existent object 'nope'",
    );
    expect(throwsIronic(() => applyPatch(doc, [{ op: 'replace', path: '/extra/nope', value: 1 }])).faultstring).toContain(
      "can't replace a non-existent object 'nope'",
    );
    expect(throwsIronic(() => applyPatch(doc, [{ op: 'add', path: '/new', value: 1 }])).faultstring).toBe(
      'Adding a new attribute (/new) to the root of the resource is not allowed',
    );
  });
  it('validates the document and the patchable fields', () => {
    expect(throwsIronic(() => validatePatch([{ op: 'move', path: '/name' }])).faultstring).toBe(
      "Schema error for patch: 'move' is not one of ['add', 'replace', 'remove']",
    );
    expect(throwsIronic(() => validatePatch([{ op: 'add', path: 'name', value: 1 }])).faultstring).toContain("does not match '^(/[\\\\w-]+)+$'");
    expect(throwsIronic(() => patchFields([{ op: 'add', path: '/x', value: 1 }], ['name', 'extra'])).faultstring).toBe(
      'Cannot patch /x. Only the following can be updated: name, extra',
    );
  });
});

describe('secret masking', () => {
  it('masks password-like keys recursively', () => {
    expect(maskDictPassword({ ipmi_password: 'x', user: 'u', nested: { auth_token: 't' } })).toEqual({
      ipmi_password: '******',
      user: 'u',
      nested: { auth_token: '******' },
    });
  });
});
