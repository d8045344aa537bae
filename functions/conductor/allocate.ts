/**
 * The allocation process (ironic.conductor.allocations.do_allocate) as the steps of
 * cdk/statemachines/node-allocation.asl.json. Each step is a plain async function
 * of JSON -> JSON: the step Lambdas export them in AWS, the local runner calls them
 * directly.
 *
 * The execution input carries what the allocation asks for (resource class, traits,
 * candidates, owner: fixed at creation), so the steps do not re-read it. Ownership is
 * enforced where it matters: every write a step makes is conditioned on the
 * allocation still being `allocating` with exec = this execution, so an execution
 * whose allocation was deleted or taken over can never change anything.
 */
import { count, millis } from '../observability/powertools.js';
import {
  AllocationFailed,
  MAX_CANDIDATES,
  allocationFailedText,
  chooseCandidates,
  stillSuitable,
  unexpectedFailureText,
  type AllocationRequest,
  type CandidateNode,
} from '../core/baremetal/allocations.js';
import type { AllocationRecord } from '../core/baremetal/records.js';
import { internalErrorText } from '../core/errors.js';
import { config } from '../config.js';
import { failAllocation } from '../store/baremetal/allocations.js';
import { reserveNode } from '../store/baremetal/reservation.js';
import type { CandidateSource } from '../store/baremetal/scheduler.js';
import { scheduler } from '../bridge/scheduler.js';
import { RETRY, sleep, withRetries } from '../store/ddb/retry.js';
import { log } from '../observability/log.js';
import { tally } from '../observability/counters.js';

/** a node to try: its UUID and creation sequence (which its index key needs) */
export type Candidate = [string, number];

/** what an execution knows about its allocation */
export interface AllocationSpec extends AllocationRequest {
  seq: number;
  /** who created it (BAREMETAL_SCHEDULER=placement: its consumer's project without an owner, and user) */
  consumer_project?: string | null;
  consumer_user?: string | null;
}

export interface AllocationStepInput {
  allocation: string;
  execution: string;
  spec: AllocationSpec;
  /** FindCandidates: how many times the index was found empty already */
  findAttempt?: number;
  /** ReserveNode: the nodes to try, in order, as [uuid, seq] */
  candidates?: Candidate[];
  /** ReserveNode: more nodes fitted than `candidates` carries (MAX_CANDIDATES): top up from the index */
  more?: boolean;
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

/** The input of the execution that processes `a`. */
export function executionInput(a: AllocationRecord, execution: string): Record<string, unknown> {
  const spec: AllocationSpec = {
    uuid: a.uuid,
    name: a.name,
    resource_class: a.resource_class,
    traits: a.traits ?? [],
    candidate_nodes: a.candidate_nodes ?? [],
    owner: a.owner,
    seq: a.seq,
    ...(a.consumer_project ? { consumer_project: a.consumer_project } : {}),
    ...(a.consumer_user ? { consumer_user: a.consumer_user } : {}),
  };
  return { allocation: a.uuid, execution, spec };
}

/** ReserveNode passes (Ironic: node_locked_retry_attempts) */
export const RESERVE_ATTEMPTS = 3;

/**
 * How often an empty index is looked at again (after the state machine's Wait): the
 * index of a deployed table is eventually consistent, so a node made available a
 * moment ago may not be in it yet. DynamoDB Local updates indexes synchronously.
 */
function findRetries(): number {
  return config().baremetal.indexRetries ?? (config().ddbEndpoint ? 0 : 1);
}

/**
 * The nodes an allocation could take, from the scheduler's source: the allocatable nodes
 * of its class from the node index, or (BAREMETAL_SCHEDULER=placement, migrated) the
 * providers of the forest with a free unit of its class. Either is only a list to try:
 * the reservation re-checks everything in its own conditions.
 */
async function lookForNodes(source: CandidateSource, req: AllocationSpec, again = false) {
  const t0 = performance.now();
  try {
    if (source.from === 'forest') tally('reserve.fromForest');
    return await source.look(req, again);
  } finally {
    tally('reserve.lookMs', performance.now() - t0);
  }
}

/** What the scheduler's sources read, loaded while a step Lambda initialises (the placement scheduler: the forest). */
export function prewarmScheduler(): Promise<void> {
  return scheduler().prewarm();
}

/** FindCandidates: the allocatable nodes of the class that fit, shuffled, name first. */
export async function findCandidates(input: AllocationStepInput): Promise<AllocationStepOutput> {
  tally('reserve.find');
  const req = input.spec;
  // the index is eventually consistent; the reservation re-checks every condition
  const nodes = await lookForNodes(await scheduler().source(), req);
  try {
    const chosen = chooseCandidates(nodes, req);
    const candidates = chosen.slice(0, MAX_CANDIDATES).map((n) => [n.uuid, n.seq] as Candidate);
    return { ...input, outcome: 'candidates', candidates, ...(chosen.length > MAX_CANDIDATES ? { more: true } : {}) };
  } catch (e) {
    if (!(e instanceof AllocationFailed)) throw e;
    const attempt = input.findAttempt ?? 0;
    if (!nodes.length && attempt < findRetries()) return { ...input, outcome: 'wait', findAttempt: attempt + 1 };
    return { ...input, outcome: 'failed', reason: allocationFailedText(req.uuid, e.reason) };
  }
}

/**
 * ReserveNode: try the candidates in order. Each try is one transaction (see
 * store/baremetal/allocations.ts reserveNode) whose conditions re-check everything
 * the node must satisfy, so the candidate list may be stale. After a lost race the
 * list is intersected with a fresh look at the allocatable index (shared with the
 * other executions of this process), so nodes others took meanwhile are not even
 * tried; no node is tried twice. When the execution carries only the first
 * MAX_CANDIDATES of the nodes that fitted (`more`), that fresh look also tops the list up
 * with fitting nodes not tried yet, so a bounded state never makes a free node
 * unreachable. A node another transaction held at that instant (Ironic's NodeLocked) is
 * retried after a short pause, then in a later pass.
 */
export async function reserve(input: AllocationStepInput): Promise<AllocationStepOutput> {
  tally('reserve.reserveCalls');
  const req = input.spec;
  let pending: Candidate[] = input.candidates ?? [];
  let busy: Candidate[] = [];
  const lost = new Set<string>();
  const tried = new Set<string>();
  const source = await scheduler().source();
  for (let pass = 0; pass < RESERVE_ATTEMPTS && pending.length; pass++) {
    busy = [];
    let queue = pending.filter(([u]) => !lost.has(u));
    while (queue.length) {
      const [uuid, seq] = queue.shift()!;
      tried.add(uuid);
      const t0 = performance.now();
      const out = await reserveNode(req, input.execution, { uuid, seq }, source.commit);
      tally('reserve.reserveMs', performance.now() - t0);
      tally('reserve.attempts');
      if ('ok' in out) {
        tally('reserve.won');
        settled(req, 'active');
        log.debug('node reserved', { allocation: req.uuid, node: uuid });
        return { allocation: input.allocation, execution: input.execution, spec: req, outcome: 'reserved', node: uuid };
      }
      if (out.error === 'gone') {
        tally('reserve.gone');
        return { ...input, outcome: 'gone' };
      }
      if (out.error === 'instance_associated') {
        const text = `Instance ${req.uuid} is already associated with a node, it cannot be associated with this other node ${uuid}`;
        return { ...input, outcome: 'failed', reason: unexpectedFailureText(text) };
      }
      if (out.error === 'consumer_exists') return { ...input, outcome: 'failed', reason: unexpectedFailureText(out.detail) };
      if (out.error === 'busy' || out.error === 'held') {
        // another transaction touched the node, or another execution holds it (Ironic's NodeLocked): later
        if (out.error === 'held') tally('reserve.held');
        else tally('reserve.busy');
        busy.push([uuid, seq]);
        continue;
      }
      // taken: others are winning nodes right now; keep only what is still allocatable
      tally('reserve.taken');
      lost.add(uuid);
      if (queue.length || input.more) {
        tally('reserve.refreshes');
        const fresh = await lookForNodes(source, req, true);
        const still = new Set(fresh.filter((n) => stillSuitable(n, req)).map((n) => n.uuid));
        queue = queue.filter(([u]) => still.has(u) && !lost.has(u));
        if (input.more) queue.push(...topUp(fresh, req, queue, tried));
      }
    }
    pending = busy;
    if (busy.length) await sleep(10 + Math.random() * 40);
  }
  const attempt = input.reserveAttempt ?? 0;
  if (busy.length && attempt + 1 < RESERVE_ATTEMPTS) {
    tally('reserve.retries');
    return { ...input, outcome: 'retry', candidates: busy, reserveAttempt: attempt + 1 };
  }
  const reason = busy.length ? `could not reserve any of ${busy.length} suitable nodes` : 'all nodes were filtered out during reservation';
  return { ...input, outcome: 'failed', reason: allocationFailedText(req.uuid, reason) };
}

/** Fitting nodes of a fresh look that are neither queued nor tried yet, up to MAX_CANDIDATES queued in all. */
function topUp(fresh: Array<CandidateNode & { seq: number }>, req: AllocationSpec, queue: Candidate[], tried: Set<string>): Candidate[] {
  const queued = new Set(queue.map(([u]) => u));
  let fitting: typeof fresh;
  try {
    fitting = chooseCandidates(fresh, req);
  } catch (e) {
    if (e instanceof AllocationFailed) return [];
    throw e;
  }
  return fitting
    .filter((n) => !queued.has(n.uuid) && !tried.has(n.uuid))
    .slice(0, Math.max(0, MAX_CANDIDATES - queue.length))
    .map((n) => [n.uuid, n.seq] as Candidate);
}

/** Metrics: how long an allocation took from POST to its final state (seq is its creation time in µs). */
function settled(spec: AllocationSpec, state: 'active' | 'error') {
  if (spec.seq > 0) millis('AllocationSettleTime', Math.max(0, Date.now() - Math.floor(spec.seq / 1000)));
  count(state === 'active' ? 'AllocationsActive' : 'AllocationsFailed');
}

/**
 * FailAllocation / FailUnexpected: state error with Ironic's last_error. An expected
 * failure (FailAllocation) carries Ironic's text; an error Step Functions caught
 * (FailUnexpected) is logged with its detail, and last_error names only the execution.
 */
export async function fail(input: AllocationStepInput): Promise<AllocationStepOutput> {
  tally('reserve.failed');
  if (input.reason === undefined) {
    log.error('allocation failed unexpectedly', {
      allocation: input.allocation,
      execution: input.execution,
      error: input.error?.Error,
      cause: input.error?.Cause,
    });
  }
  const reason = input.reason ?? unexpectedFailureText(internalErrorText('Execution', input.execution));
  // stale: the write was not applied (a concurrent transaction): try again; lost: the
  // allocation is no longer this execution's (deleted, taken over)
  const recorded = await withRetries(async () => {
    const r = await failAllocation(input.spec, input.execution, reason);
    if ('ok' in r) return true;
    return r.error === 'stale' ? RETRY : false;
  });
  if (recorded) settled(input.spec, 'error');
  log.debug('allocation failed', { allocation: input.allocation, reason, recorded });
  return { allocation: input.allocation, execution: input.execution, spec: input.spec, outcome: recorded ? 'done' : 'gone' };
}
