/**
 * GET /allocation_candidates query parsing (lib.RequestGroup / RequestWideParams):
 * groups, precedence of repeated keys, and every 400 with Placement's text and code.
 * (The query's JSON-schema check runs before this and is tested with the handler.)
 */
import { describe, expect, it } from 'vitest';
import { namesOf, parseCandidatesQuery } from '../../../functions/core/placement/candidates/request.js';
import { Problem } from '../../../functions/core/errors.js';
import { parseQuery } from '../../../functions/http/types.js';
import { version } from './forests.js';

const A = 'a1b2c3d4-0000-4000-8000-000000000001';
const B = 'a1b2c3d4-0000-4000-8000-000000000002';

const parse = (qs: string, v = '1.39') => parseCandidatesQuery(parseQuery(qs), version(v));

function problem(qs: string, v = '1.39'): Problem {
  try {
    parse(qs, v);
  } catch (e) {
    expect(e).toBeInstanceOf(Problem);
    return e as Problem;
  }
  throw new Error(`expected ${qs} to be refused at ${v}`);
}

describe('request groups', () => {
  it('splits numbered and named groups in order of first appearance', () => {
    const r = parse(
      `resources_B=VCPU:1&resources=DISK_GB:10&required_B=in:CUSTOM_A,CUSTOM_B&required_B=!CUSTOM_C&member_of=in:${A},${B}&member_of=!${A}&in_tree_B=${A}&group_policy=isolate`,
    );
    expect(r.groups.map((g) => [g.suffix, g.useSameProvider])).toEqual([
      ['_B', true],
      ['', false],
    ]);
    const [b, u] = r.groups;
    expect(b!.resources).toEqual([['VCPU', 1]]);
    expect(b!.requiredTraits).toEqual([new Set(['CUSTOM_A', 'CUSTOM_B'])]);
    expect(b!.forbiddenTraits).toEqual(new Set(['CUSTOM_C']));
    expect(b!.inTree).toBe(A);
    expect(u!.memberOf).toEqual([new Set([A, B])]);
    expect(u!.forbiddenAggs).toEqual(new Set([A]));
    expect(r.groupPolicy).toBe('isolate');
    expect(r.nestedAware).toBe(true);
  });
  it('takes the last resources value and the first limit and group_policy', () => {
    const r = parse('resources=VCPU:1&resources=VCPU:2&limit=10&limit=1&resources1=VCPU:1&resources2=VCPU:1&group_policy=isolate&group_policy=none');
    expect(r.groups[0]!.resources).toEqual([['VCPU', 2]]);
    expect(r.limit).toBe(10);
    expect(r.groupPolicy).toBe('isolate');
  });
  it('before 1.39 only the last required value counts; from 1.39 all are ANDed', () => {
    expect(parse('resources=VCPU:1&required=CUSTOM_A&required=CUSTOM_B', '1.38').groups[0]!.requiredTraits).toEqual([new Set(['CUSTOM_B'])]);
    expect(parse('resources=VCPU:1&required=CUSTOM_A&required=CUSTOM_B').groups[0]!.requiredTraits).toEqual([
      new Set(['CUSTOM_A']),
      new Set(['CUSTOM_B']),
    ]);
  });
  it('numbered suffixes only before 1.33 (other keys are left to the schema)', () => {
    expect(parse('resources1=VCPU:1&resources_X=VCPU:1', '1.32').groups.map((g) => g.suffix)).toEqual(['1']);
  });
  it('root_required and same_subtree', () => {
    const r = parse('resources_A=VCPU:1&required_N=HW_NUMA_ROOT&root_required=CUSTOM_A,!CUSTOM_B,!!CUSTOM_C&same_subtree=_A,_N,_A&group_policy=none');
    expect(r.rootRequired).toEqual({ required: ['CUSTOM_A'], forbidden: ['CUSTOM_B', 'CUSTOM_C'] });
    expect(r.sameSubtrees).toEqual([['_A', '_N']]);
  });
  it('nested awareness starts at 1.29', () => {
    expect(parse('resources=VCPU:1', '1.28').nestedAware).toBe(false);
  });
  it('lists every class and trait named, for existence checks', () => {
    expect(
      namesOf(parse('resources=VCPU:1&required=CUSTOM_A,!CUSTOM_B&resources1=DISK_GB:1&required1=in:CUSTOM_A,CUSTOM_C&root_required=CUSTOM_R')),
    ).toEqual({
      resourceClasses: ['VCPU', 'DISK_GB'],
      traits: ['CUSTOM_R', 'CUSTOM_A', 'CUSTOM_B', 'CUSTOM_C'],
    });
  });
});

describe('errors (Placement text and codes)', () => {
  const cases: Array<[string, string, string, string?]> = [
    [
      '1.10',
      'resources=',
      'Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: empty string.',
    ],
    [
      '1.10',
      'resources=VCPU',
      'Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: VCPU.',
    ],
    ['1.10', 'resources=VCPU:x', 'Requested resource VCPU expected positive integer amount. Got: x.'],
    ['1.10', 'resources=VCPU:0', 'Requested resource VCPU requires amount >= 1. Got: 0.'],
    [
      '1.17',
      'resources=VCPU:1&required=',
      "Invalid query string parameters: Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: ",
    ],
    [
      '1.22',
      'resources=VCPU:1&required=',
      "Invalid query string parameters: Expected 'required' parameter value of the form: HW_CPU_X86_VMX,!CUSTOM_MAGIC. Got an empty trait in: ",
    ],
    [
      '1.17',
      'resources=VCPU:1&required=!CUSTOM_A',
      "Invalid query string parameters: Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: !CUSTOM_A",
    ],
    [
      '1.38',
      'resources=VCPU:1&required=in:CUSTOM_A',
      "Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: in:CUSTOM_A",
    ],
    [
      '1.39',
      'resources=VCPU:1&required=in:!CUSTOM_A',
      "Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. Got: in:!CUSTOM_A",
    ],
    ['1.21', 'resources=VCPU:1&member_of=bad', "Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: bad"],
    [
      '1.21',
      `resources=VCPU:1&member_of=${A},${B}`,
      `Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword using the valid microversion. Got: ${A},${B}`,
    ],
    ['1.23', `resources=VCPU:1&member_of=${A}&member_of=${B}`, 'Multiple member_of parameters are not supported'],
    ['1.31', `resources=VCPU:1&member_of=!${A}`, 'Forbidden member_of parameters are not supported in the specified microversion'],
    ['1.31', 'resources=VCPU:1&in_tree=bad', "Invalid query string parameters: Expected 'in_tree' parameter to be a format of uuid. Got: bad"],
    [
      '1.25',
      'required=CUSTOM_A&required1=CUSTOM_B',
      'All traits parameters must be associated with resources.  Found the following orphaned traits keys: required, required1',
    ],
    [
      '1.25',
      `member_of=${A}&member_of3=${A}`,
      'All member_of parameters must be associated with resources. Found the following orphaned member_of keys: member_of, member_of3',
    ],
    ['1.31', `resources=VCPU:1&in_tree1=${A}`, 'All request groups must specify resources.'],
    ['1.25', 'group_policy=isolate', 'At least one request group (`resources` or `resources{$S}`) is required.'],
    [
      '1.25',
      'resources1=VCPU:1&resources2=VCPU:1',
      'The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.',
    ],
    [
      '1.22',
      'resources=VCPU:1&required=CUSTOM_A,!CUSTOM_A',
      'Conflicting required and forbidden traits found in the following traits keys: required: (CUSTOM_A)',
    ],
    [
      '1.39',
      'resources=VCPU:1&required=in:CUSTOM_A,CUSTOM_B&required=!CUSTOM_A,!CUSTOM_B',
      'Conflicting required and forbidden traits found in the following traits keys: required: (CUSTOM_A, CUSTOM_B)',
    ],
    [
      '1.35',
      'resources=VCPU:1&root_required=CUSTOM_A&root_required=CUSTOM_B',
      "Query parameter 'root_required' may be specified only once.",
      'placement.query.duplicate_key',
    ],
    [
      '1.35',
      'resources=VCPU:1&root_required=CUSTOM_A,!CUSTOM_A',
      'Conflicting required and forbidden traits found in root_required: CUSTOM_A',
      'placement.query.bad_value',
    ],
    [
      '1.39',
      'resources=VCPU:1&root_required=in:CUSTOM_A',
      "Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: in:CUSTOM_A",
    ],
    [
      '1.36',
      'resources_A=VCPU:1&same_subtree=,_A',
      'Empty string (unsuffixed group) can not be specified in `same_subtree` ',
      'placement.query.bad_value',
    ],
    [
      '1.36',
      'required_B=CUSTOM_A&same_subtree=_B',
      'There must be at least one resources or resources[$S] parameter.',
      'placement.query.missing_value',
    ],
    ['1.36', 'group_policy=none', 'There must be at least one resources or resources[$S] parameter.', 'placement.query.missing_value'],
    [
      '1.36',
      'resources_A=VCPU:1&required_B=CUSTOM_A&required=CUSTOM_C&same_subtree=_A',
      "Resourceless suffixed group request should be specified in `same_subtree` query param: bad group(s) - ['_B', ''].",
      'placement.query.bad_value',
    ],
    [
      '1.36',
      'resources_A=VCPU:1&same_subtree=_A,_X,_Y',
      "Real suffixes should be specified in `same_subtree`: ['_X', '_Y'] not found in ['_A'].",
      'placement.query.bad_value',
    ],
  ];
  it.each(cases)('%s %s', (v, qs, detail, code) => {
    const p = problem(qs, v);
    expect(p.status).toBe(400);
    expect(p.detail).toBe(detail);
    expect(p.code).toBe(code);
  });
});
