/**
 * GET /allocation_candidates query string -> request groups and request-wide
 * parameters, exactly as Placement parses it (placement/lib.py RequestGroup /
 * RequestWideParams, util.normalize_*): same precedence for repeated keys, same
 * checks in the same order, same messages and error codes. Pure: the JSON-schema
 * check of the query (schemas/placement/allocation-candidates.ts) runs before this.
 */
import { Problem } from '../../errors.js';
import { pyRepr } from '../../compat/pyrepr.js';
import { parseInTree, parseMemberOfParams, parseResources, parseTraitsParam, parseTraitsParams } from '../query.js';

/** placement/errors.py codes used by the query checks */
export const QUERY_CODES = {
  DUPLICATE_KEY: 'placement.query.duplicate_key',
  BAD_VALUE: 'placement.query.bad_value',
  MISSING_VALUE: 'placement.query.missing_value',
} as const;

const bad = (detail: string, code?: string) => new Problem(400, detail, code);

export interface RequestGroup {
  /** '' for the unnumbered group */
  suffix: string;
  /** granular (suffixed) groups must be satisfied by one provider */
  useSameProvider: boolean;
  /** resource class -> amount, in query order */
  resources: Array<[string, number]>;
  /** AND of ORs */
  requiredTraits: Set<string>[];
  forbiddenTraits: Set<string>;
  /** AND of ORs */
  memberOf: Set<string>[];
  forbiddenAggs: Set<string>;
  inTree?: string;
}

export interface RootTraits {
  required: string[];
  forbidden: string[];
}

export interface CandidatesRequest {
  /** in order of first appearance in the query string */
  groups: RequestGroup[];
  limit?: number;
  /** the first group_policy value ('none' | 'isolate'; anything else behaves like none) */
  groupPolicy?: string;
  rootRequired?: RootTraits;
  /** each same_subtree value: its suffixes, de-duplicated, in order */
  sameSubtrees: string[][];
  /** >= 1.29: allocation requests may combine providers of one tree */
  nestedAware: boolean;
}

/** what the parser needs from the request's microversion */
export interface VersionLike {
  atLeast(major: number, minor: number): boolean;
}

const KEY = /^(resources|required|member_of|in_tree)([1-9][0-9]*)?$/;
const KEY_1_33 = /^(resources|required|member_of|in_tree)([a-zA-Z0-9_-]{1,64})?$/;

/** an empty request group (granular when suffixed) */
export function newGroup(suffix: string): RequestGroup {
  return {
    suffix,
    useSameProvider: suffix !== '',
    resources: [],
    requiredTraits: [],
    forbiddenTraits: new Set(),
    memberOf: [],
    forbiddenAggs: new Set(),
  };
}

function getAll(pairs: ReadonlyArray<readonly [string, string]>, key: string): string[] {
  const out: string[] = [];
  for (const [k, v] of pairs) if (k === key) out.push(v);
  return out;
}

/** lib.RequestWideParams.from_request */
function requestWide(pairs: ReadonlyArray<readonly [string, string]>): Omit<CandidatesRequest, 'groups' | 'nestedAware'> {
  const out: Omit<CandidatesRequest, 'groups' | 'nestedAware'> = { sameSubtrees: [] };
  const limits = getAll(pairs, 'limit');
  if (limits.length) {
    // the schema checked the last value; Placement uses the first
    const first = limits[0]!.trim();
    if (!/^[+-]?\d+$/.test(first)) throw bad(`Invalid query string parameters: invalid limit ${pyRepr(limits[0]!)}`);
    out.limit = Number.parseInt(first, 10);
  }
  const policies = getAll(pairs, 'group_policy');
  if (policies.length) out.groupPolicy = policies[0];
  const roots = getAll(pairs, 'root_required');
  if (roots.length) {
    if (roots.length > 1) {
      throw bad("Query parameter 'root_required' may be specified only once.", QUERY_CODES.DUPLICATE_KEY);
    }
    // root_required has no any-traits (in:) form: the legacy parser refuses it
    const parsed = parseTraitsParam(roots[0]!, true, false);
    const required = parsed.required.map((s) => [...s][0]!);
    const forbidden = [...parsed.forbidden];
    const conflicts = forbidden.filter((t) => required.includes(t));
    if (conflicts.length) {
      throw bad(`Conflicting required and forbidden traits found in root_required: ${conflicts.join(', ')}`, QUERY_CODES.BAD_VALUE);
    }
    out.rootRequired = { required: [...new Set(required)], forbidden };
  }
  for (const val of getAll(pairs, 'same_subtree')) {
    const suffixes = [...new Set(val.split(',').map((s) => s.trim()))];
    if (suffixes.includes('')) {
      throw bad('Empty string (unsuffixed group) can not be specified in `same_subtree` ', QUERY_CODES.BAD_VALUE);
    }
    out.sameSubtrees.push(suffixes);
  }
  return out;
}

/** lib.RequestGroup._parse_request_items */
function parseGroups(pairs: ReadonlyArray<readonly [string, string]>, v: VersionLike): Map<string, RequestGroup> {
  const allowForbidden = v.atLeast(1, 22);
  const anyTraits = v.atLeast(1, 39);
  const multiMemberOf = v.atLeast(1, 24);
  const forbiddenAggs = v.atLeast(1, 32);
  const pattern = v.atLeast(1, 33) ? KEY_1_33 : KEY;
  const out = new Map<string, RequestGroup>();
  for (const [key, val] of pairs) {
    const m = pattern.exec(key);
    if (!m) continue;
    const prefix = m[1]!;
    const suffix = m[2] ?? '';
    let g = out.get(suffix);
    if (!g) out.set(suffix, (g = newGroup(suffix)));
    switch (prefix) {
      case 'resources':
        g.resources = Object.entries(parseResources(val));
        break;
      case 'required': {
        const t = parseTraitsParams(getAll(pairs, key), allowForbidden, anyTraits);
        g.requiredTraits = t.required;
        g.forbiddenTraits = t.forbidden;
        break;
      }
      case 'member_of': {
        const a = parseMemberOfParams(getAll(pairs, key), suffix, multiMemberOf, forbiddenAggs);
        g.memberOf = a.required;
        g.forbiddenAggs = a.forbidden;
        break;
      }
      case 'in_tree':
        g.inTree = parseInTree(val);
        break;
    }
  }
  return out;
}

/** lib.RequestGroup._check_for_orphans (before 1.36) */
function checkOrphans(groups: RequestGroup[]): void {
  const traitOrphans = groups.filter((g) => g.requiredTraits.length && !g.resources.length).map((g) => `required${g.suffix}`);
  if (traitOrphans.length) {
    throw bad(`All traits parameters must be associated with resources.  Found the following orphaned traits keys: ${traitOrphans.join(', ')}`);
  }
  const aggOrphans = groups.filter((g) => !g.resources.length && (g.memberOf.length || g.forbiddenAggs.size)).map((g) => `member_of${g.suffix}`);
  if (aggOrphans.length) {
    throw bad(`All member_of parameters must be associated with resources. Found the following orphaned member_of keys: ${aggOrphans.join(', ')}`);
  }
  if (!groups.every((g) => g.resources.length)) throw bad('All request groups must specify resources.');
  if (!groups.length) throw bad('At least one request group (`resources` or `resources{$S}`) is required.');
}

/** the 1.36 checks: resourceless groups must be named in same_subtree, and vice versa */
function checkSameSubtree(groups: RequestGroup[], sameSubtrees: string[][]): void {
  const resourceless = groups.filter((g) => !g.resources.length).map((g) => g.suffix);
  if (resourceless.length === groups.length) {
    throw bad('There must be at least one resources or resources[$S] parameter.', QUERY_CODES.MISSING_VALUE);
  }
  const named = new Set(sameSubtrees.flat());
  const unnamed = resourceless.filter((s) => !named.has(s));
  if (unnamed.length) {
    throw bad(
      `Resourceless suffixed group request should be specified in \`same_subtree\` query param: bad group(s) - ${pyRepr(unnamed)}.`,
      QUERY_CODES.BAD_VALUE,
    );
  }
  const suffixes = groups.map((g) => g.suffix);
  const unknown = [...named].filter((s) => !suffixes.includes(s));
  if (unknown.length) {
    throw bad(`Real suffixes should be specified in \`same_subtree\`: ${pyRepr(unknown)} not found in ${pyRepr(suffixes)}.`, QUERY_CODES.BAD_VALUE);
  }
}

/** lib.RequestGroup._check_forbidden */
function checkForbidden(groups: RequestGroup[]): void {
  const conflicts: string[] = [];
  for (const g of groups) {
    for (const any of g.requiredTraits) {
      if ([...any].every((t) => g.forbiddenTraits.has(t))) conflicts.push(`required${g.suffix}: (${[...any].sort().join(', ')})`);
    }
  }
  if (conflicts.length) {
    throw bad(`Conflicting required and forbidden traits found in the following traits keys: ${conflicts.sort().join(', ')}`);
  }
}

/**
 * Parse a schema-valid GET /allocation_candidates query (webob's ordered pairs) the
 * way Placement's handler does, raising Placement's 400s as Problems.
 */
export function parseCandidatesQuery(pairs: ReadonlyArray<readonly [string, string]>, v: VersionLike): CandidatesRequest {
  const wide = requestWide(pairs);
  const byGroup = parseGroups(pairs, v);
  const groups = [...byGroup.values()];
  if (v.atLeast(1, 36)) checkSameSubtree(groups, wide.sameSubtrees);
  else checkOrphans(groups);
  if (v.atLeast(1, 22)) checkForbidden(groups);
  if (!wide.groupPolicy && groups.filter((g) => g.useSameProvider).length > 1) {
    throw bad('The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.');
  }
  return { ...wide, groups, nestedAware: v.atLeast(1, 29) };
}

/** every resource class and trait name the request mentions (for existence checks) */
export function namesOf(req: CandidatesRequest): { resourceClasses: string[]; traits: string[] } {
  const rcs = new Set<string>();
  const traits = new Set<string>();
  for (const t of req.rootRequired?.required ?? []) traits.add(t);
  for (const t of req.rootRequired?.forbidden ?? []) traits.add(t);
  for (const g of req.groups) {
    for (const [rc] of g.resources) rcs.add(rc);
    for (const any of g.requiredTraits) for (const t of any) traits.add(t);
    for (const t of g.forbiddenTraits) traits.add(t);
  }
  return { resourceClasses: [...rcs], traits: [...traits] };
}
