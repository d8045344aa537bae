import { describe, expect, it } from 'vitest';
import { parseInTree, parseMemberOfParams, parseResources, parseTraitsParams } from '../../../functions/core/placement/query.js';
import { Problem } from '../../../functions/core/errors.js';

const A = 'a1b2c3d4-0000-4000-8000-000000000001';
const B = 'a1b2c3d4-0000-4000-8000-000000000002';

function problem(fn: () => unknown): Problem {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(Problem);
    return e as Problem;
  }
  throw new Error('expected a Problem');
}

describe('resources=', () => {
  it('parses amounts', () => expect(parseResources('VCPU:2,MEMORY_MB:1024')).toEqual({ VCPU: 2, MEMORY_MB: 1024 }));
  it('rejects empty, malformed, non-integer and non-positive values with Placement text', () => {
    expect(problem(() => parseResources('')).detail).toContain('Got: empty string.');
    expect(problem(() => parseResources('VCPU')).detail).toContain('Got: VCPU.');
    expect(problem(() => parseResources('VCPU:x')).detail).toBe('Requested resource VCPU expected positive integer amount. Got: x.');
    expect(problem(() => parseResources('VCPU:0')).detail).toBe('Requested resource VCPU requires amount >= 1. Got: 0.');
  });
});

describe('required=', () => {
  it('splits required and forbidden traits', () => {
    const f = parseTraitsParams(['A,!B,C'], true, false);
    expect(f.required.map((s) => [...s])).toEqual([['A'], ['C']]);
    expect([...f.forbidden]).toEqual(['B']);
  });
  it('refuses forbidden traits before 1.22 and in: before 1.39', () => {
    expect(problem(() => parseTraitsParams(['!B'], false, false)).detail).toContain('HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: !B');
    expect(problem(() => parseTraitsParams(['in:A,B'], true, false)).detail).toContain('only supported since microversion 1.39');
  });
  it('supports any-of and repeated params from 1.39, only the last value before', () => {
    expect(parseTraitsParams(['in:A,B', 'C'], true, true).required.map((s) => [...s].sort())).toEqual([['A', 'B'], ['C']]);
    expect(parseTraitsParams(['A', 'C'], true, false).required.map((s) => [...s])).toEqual([['C']]);
  });
  it('reports empty traits', () => {
    expect(problem(() => parseTraitsParams(['A,,B'], true, false)).detail).toContain('Got an empty trait in: A,,B');
  });
});

describe('member_of=', () => {
  it('parses in:, ! and !in:', () => {
    const f = parseMemberOfParams([`in:${A},${B}`, `!${A}`], '', true, true);
    expect(f.required.map((s) => [...s])).toEqual([[A, B]]);
    expect([...f.forbidden]).toEqual([A]);
  });
  it('applies the microversion gates', () => {
    expect(problem(() => parseMemberOfParams([A, B], '', false, false)).detail).toBe('Multiple member_of parameters are not supported');
    expect(problem(() => parseMemberOfParams([`!${A}`], '1', true, false)).detail).toBe(
      'Forbidden member_of1 parameters are not supported in the specified microversion',
    );
    expect(problem(() => parseMemberOfParams([`${A},${B}`], '', true, true)).detail).toContain("must be prefixed with the 'in:' or '!in:'");
    expect(problem(() => parseMemberOfParams(['in:nope'], '', true, true)).detail).toContain('valid UUID(s). Got: nope');
  });
  it('validates in_tree', () => {
    expect(parseInTree(` ${A} `)).toBe(A);
    expect(problem(() => parseInTree('x')).detail).toContain("Expected 'in_tree' parameter to be a format of uuid");
  });
});
