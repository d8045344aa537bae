/**
 * The allocation process (ironic.conductor.allocations.do_allocate) as the steps of
 * cdk/statemachines/node-allocation.asl.json. Each step is a plain async function
 * of JSON -> JSON: the step Lambdas export them in AWS, the local runner calls them
 * directly. Every step first checks that its execution still owns the allocation,
 * and every write it makes is conditioned on that, so a taken-over or deleted
 * allocation is never touched by a stale execution.
 */
import {
  ALLOCATION_STATES,
  AllocationFailed,
  allocationFailedText,
  chooseCandidates,
  stillSuitable,
  unexpectedFailureText,
  type AllocationRequest,
  type NodeRecord,
} from '../core/baremetal.js';
import { getNodes, queryNodes } from '../store/baremetal-nodes.js';
import { failAllocation, getAllocation, reserveNode, type StoredAllocation } from '../store/baremetal-allocations.js';
import { sleep } from '../store/tx.js';
import { log } from '../http/log.js';
import { causeText } from './node-actions.js';

export interface AllocationStepInput {
  allocation: string;
  execution: string;
  /** FindCandidates: how many times the index was found empty already */
  findAttempt?: number;
  /** ReserveNode: the nodes to try, in order */
  candidates?: string[];
  /** ReserveNode: passes made over nodes another transaction held */
  reserveAttempt?: number;
  /** FailAllocation: Ironic's last_error text */
  reason?: string;
  /** FailUnexpected: the error Step Functions caught */
  error?: { Error?: string; Cause?: string };
}

export interface AllocationStepOutput extends AllocationStepInput {
  outcome: 'candidates' | 'wait' | 'failed' | 'reserved' | 'retry' | 'gone' | 'done';
  node?: string;
}

/** at most this many candidates travel in the execution state (payloads are capped at 256 KB) */
export const MAX_CANDIDATES = 2000;
/** ReserveNode passes (Ironic: node_locked_retry_attempts) */
export const RESERVE_ATTEMPTS = 3;

function findRetries(): number {
  const n = Number(process.env.BAREMETAL_INDEX_RETRIES ?? 1);
  return Number.isFinite(n) && n >= 0 ? n : 1;
}

async function owned(input: AllocationStepInput): Promise<StoredAllocation | undefined> {
  const a = await getAllocation(input.allocation);
  if (!a || a.state !== ALLOCATION_STATES.ALLOCATING || a.exec !== input.execution) return undefined;
  return a;
}

function request(a: StoredAllocation): AllocationRequest {
  return {
    uuid: a.uuid,
    name: a.name,
    resource_class: a.resource_class,
    traits: a.traits ?? [],
    candidate_nodes: a.candidate_nodes ?? [],
    owner: a.owner,
  };
}

/** FindCandidates: the allocatable nodes of the class that fit, shuffled, name first. */
export async function findCandidates(input: AllocationStepInput): Promise<AllocationStepOutput> {
  const a = await owned(input);
  if (!a) return { ...input, outcome: 'gone' };
  const req = request(a);
  // the index is eventually consistent; the reservation re-checks every condition
  const nodes = await queryNodes({ resourceClass: req.resource_class, allocatableOnly: true });
  try {
    const chosen = chooseCandidates(nodes, req);
    return { ...input, outcome: 'candidates', candidates: chosen.slice(0, MAX_CANDIDATES).map((n) => n.uuid) };
  } catch (e) {
    if (!(e instanceof AllocationFailed)) throw e;
    const attempt = input.findAttempt ?? 0;
    // a node made available a moment ago may not be in the index yet: look once more
    if (!nodes.length && attempt < findRetries()) return { ...input, outcome: 'wait', findAttempt: attempt + 1 };
    return { ...input, outcome: 'failed', reason: allocationFailedText(a.uuid, e.reason) };
  }
}

/**
 * ReserveNode: try the candidates in order. Each try is one transaction (see
 * store/baremetal-allocations.ts reserveNode). A node that another allocation took
 * is skipped — after a lost race the remaining candidates are re-read so nodes taken
 * meanwhile are not even tried; a node another transaction held at the same instant
 * is retried after a short pause (Ironic's NodeLocked), then in a later pass.
 */
export async function reserve(input: AllocationStepInput): Promise<AllocationStepOutput> {
  const a = await owned(input);
  if (!a) return { ...input, outcome: 'gone' };
  const req = request(a);
  let pending = input.candidates ?? [];
  let busy: string[] = [];
  for (let pass = 0; pass < RESERVE_ATTEMPTS && pending.length; pass++) {
    busy = [];
    let fresh = await getNodes(pending);
    let queue = pending.filter((u) => isCandidate(fresh.get(u), req));
    while (queue.length) {
      const uuid = queue.shift()!;
      const node = fresh.get(uuid)!;
      const out = await reserveNode(a, input.execution, node);
      if ('ok' in out) {
        log.info('node reserved', { allocation: a.uuid, node: uuid });
        return { allocation: input.allocation, execution: input.execution, outcome: 'reserved', node: uuid };
      }
      if (out.error === 'gone') return { ...input, outcome: 'gone' };
      if (out.error === 'instance_associated') {
        const text = `Instance ${a.uuid} is already associated with a node, it cannot be associated with this other node ${uuid}`;
        return { ...input, outcome: 'failed', reason: unexpectedFailureText(text) };
      }
      if (out.error === 'busy') {
        busy.push(uuid);
        continue;
      }
      // taken: others are winning nodes right now; drop the ones already gone
      if (queue.length) {
        fresh = await getNodes(queue);
        queue = queue.filter((u) => isCandidate(fresh.get(u), req));
      }
    }
    pending = busy;
    if (busy.length) await sleep(10 + Math.random() * 40);
  }
  const attempt = input.reserveAttempt ?? 0;
  if (busy.length && attempt + 1 < RESERVE_ATTEMPTS) {
    return { ...input, outcome: 'retry', candidates: busy, reserveAttempt: attempt + 1 };
  }
  const reason = busy.length ? `could not reserve any of ${busy.length} suitable nodes` : 'all nodes were filtered out during reservation';
  return { ...input, outcome: 'failed', reason: allocationFailedText(a.uuid, reason) };
}

function isCandidate(n: NodeRecord | undefined, req: AllocationRequest): boolean {
  return !!n && stillSuitable(n, req);
}

/** FailAllocation / FailUnexpected: state error with Ironic's last_error. */
export async function fail(input: AllocationStepInput): Promise<AllocationStepOutput> {
  const a = await owned(input);
  if (!a) return { ...input, outcome: 'gone' };
  const reason = input.reason ?? unexpectedFailureText(causeText(input.error));
  await failAllocation(a, input.execution, reason);
  log.info('allocation failed', { allocation: a.uuid, reason });
  return { allocation: input.allocation, execution: input.execution, outcome: 'done' };
}
