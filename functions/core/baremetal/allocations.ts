import { S } from './states.js';

// ------------------------------------------------------------------ allocations

export const ALLOCATION_STATES = { ALLOCATING: 'allocating', ACTIVE: 'active', ERROR: 'error' } as const;

/**
 * Bounds on what an allocation request may ask for. What it asks travels in its
 * execution's state, which Step Functions caps at 256 KB (a larger input fails
 * StartExecution; a larger task output fails the execution with States.DataLimitExceeded,
 * which no Catch sees): with these bounds, and at most MAX_CANDIDATES nodes carried
 * between the steps, an execution's state stays under 96 KB however the request is made
 * (test/unit/baremetal/execution-state.test.ts builds the largest one). Ironic has none
 * of these bounds (owner: its database column holds 255 characters).
 */
export const ALLOCATION_LIMITS = {
  /** candidate_nodes entries */
  candidateNodes: 250,
  /** traits entries (a node holds at most 50 traits: more could never match) */
  traits: 50,
  /** characters of owner */
  owner: 255,
} as const;

/** at most this many candidate nodes travel between an execution's steps */
export const MAX_CANDIDATES = 250;

/** Why an allocation request exceeds ALLOCATION_LIMITS (Ironic-style 400 text), or undefined. */
export function allocationLimitProblem(a: { candidate_nodes?: unknown; traits?: unknown; owner?: unknown }): string | undefined {
  const over = (field: string, n: number, max: number, what: string) =>
    `Invalid input for field/attribute ${field}. ${n} ${what} given, at most ${max} are allowed.`;
  if (Array.isArray(a.candidate_nodes) && a.candidate_nodes.length > ALLOCATION_LIMITS.candidateNodes) {
    return over('candidate_nodes', a.candidate_nodes.length, ALLOCATION_LIMITS.candidateNodes, 'nodes');
  }
  if (Array.isArray(a.traits) && a.traits.length > ALLOCATION_LIMITS.traits)
    return over('traits', a.traits.length, ALLOCATION_LIMITS.traits, 'traits');
  if (typeof a.owner === 'string' && [...a.owner].length > ALLOCATION_LIMITS.owner) {
    return `Invalid input for field/attribute owner. ${[...a.owner].length} characters given, at most ${ALLOCATION_LIMITS.owner} are allowed.`;
  }
  return undefined;
}

/** last_error's reason when orphan recovery gives up on an allocation or node action */
export function resumeLimitText(resumes: number): string {
  return `its processing stopped before it finished ${resumes + 1} times (resumed ${resumes} times by orphan recovery); giving up`;
}

/** What the candidate search needs to know about a node. */
export interface CandidateNode {
  uuid: string;
  name?: string | null;
  resource_class?: string | null;
  provision_state: string;
  maintenance: boolean;
  power_state?: string | null;
  instance_uuid?: string | null;
  owner?: string | null;
  lessee?: string | null;
  traits: string[];
}

export interface AllocationRequest {
  uuid: string;
  name?: string | null;
  resource_class: string;
  traits: string[];
  candidate_nodes: string[];
  owner?: string | null;
}

/** The database filter of _candidate_nodes (everything but traits). */
export function matchesBaseFilter(n: CandidateNode, a: AllocationRequest): boolean {
  if (n.resource_class !== a.resource_class) return false;
  if (n.provision_state !== S.AVAILABLE || n.maintenance) return false;
  if (n.power_state === undefined || n.power_state === null) return false;
  if (n.instance_uuid) return false;
  if (a.candidate_nodes.length && !a.candidate_nodes.includes(n.uuid)) return false;
  if (a.owner && n.owner !== a.owner && n.lessee !== a.owner) return false;
  return true;
}

export function traitsMatch(nodeTraits: readonly string[], wanted: readonly string[]): boolean {
  const have = new Set(nodeTraits);
  return wanted.every((t) => have.has(t));
}

/** _verify_node: does the node (re-read) still satisfy the request? */
export function stillSuitable(n: CandidateNode, a: AllocationRequest): boolean {
  return (
    !n.maintenance &&
    !n.instance_uuid &&
    n.provision_state === S.AVAILABLE &&
    n.resource_class === a.resource_class &&
    traitsMatch(n.traits, a.traits) &&
    n.power_state !== undefined &&
    n.power_state !== null &&
    (!a.owner || n.owner === a.owner || n.lessee === a.owner)
  );
}

export class AllocationFailed extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

function uniq(xs: readonly string[]): string[] {
  return [...new Set(xs)];
}

/**
 * _candidate_nodes: filter, shuffle (so parallel allocations do not try nodes in the
 * same order) and move a node named like the allocation to the front (API 1.79).
 * Throws AllocationFailed with Ironic's texts when nothing is left.
 */
export function chooseCandidates<T extends CandidateNode>(nodes: readonly T[], a: AllocationRequest, random: () => number = Math.random): T[] {
  let list = nodes.filter((n) => matchesBaseFilter(n, a));
  if (!list.length) {
    throw new AllocationFailed(
      a.candidate_nodes.length
        ? `none of the requested nodes are available and match the resource class ${a.resource_class}`
        : `no available nodes match the resource class ${a.resource_class}`,
    );
  }
  if (a.traits.length) {
    list = list.filter((n) => traitsMatch(n.traits, a.traits));
    if (!list.length) throw new AllocationFailed(`no suitable nodes have the requested traits ${uniq(a.traits).join(', ')}`);
  }
  list = shuffle(list, random);
  if (a.name) {
    const i = list.findIndex((n) => n.name === a.name);
    if (i > 0) list.unshift(...list.splice(i, 1));
  }
  return list;
}

/** Fisher-Yates (random.shuffle) */
export function shuffle<T>(xs: readonly T[], random: () => number = Math.random): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** AllocationFailed's text: the allocation's last_error. */
export function allocationFailedText(uuid: string, reason: string): string {
  return `Failed to process allocation ${uuid}: ${reason}.`;
}

/** do_allocate's text for anything else that went wrong. */
export function unexpectedFailureText(detail: string): string {
  return `Unexpected exception during allocation: ${detail}`;
}

/** Why a backfill does not fit its node (_do_backfill_allocation); empty when it does. */
export function backfillProblems(n: CandidateNode, a: { resource_class?: string | null; traits: string[]; candidate_nodes: string[] }): string[] {
  const errors: string[] = [];
  if (n.provision_state !== S.ACTIVE) {
    errors.push(`Node must be in the "active" state, but the current state is "${n.provision_state}"`);
  }
  if (a.resource_class && n.resource_class !== a.resource_class) {
    errors.push(`Resource class ${n.resource_class ?? 'None'} does not match the requested resource class ${a.resource_class}`);
  }
  if (a.traits.length && !traitsMatch(n.traits, a.traits)) {
    errors.push(`List of traits ${pyList(n.traits)} does not match the requested traits ${pyList(a.traits)}`);
  }
  if (a.candidate_nodes.length && !a.candidate_nodes.includes(n.uuid)) {
    errors.push(`Candidate nodes must be empty or contain the target node, but got ${pyList(a.candidate_nodes)}`);
  }
  return errors;
}

function pyList(xs: readonly string[]): string {
  return `[${xs.map((x) => `'${x}'`).join(', ')}]`;
}
