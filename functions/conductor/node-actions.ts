/**
 * Power and provisioning actions, asynchronous like Ironic's: the API validates the
 * request, applies the first state-machine event and takes the node's lock (Ironic's
 * reservation) in one conditional write, answers 202, and a node-action execution
 * (cdk/statemachines/node-action.asl.json) runs the driver calls and the remaining
 * events. Every write of the execution is conditioned on still holding the lock.
 */
import { isActionable, processEvent, provisionProgram, VERBS } from '../core/baremetal/states.js';
import { internalErrorText } from '../core/errors.js';
import { isoNow, type NodeRecord } from '../core/baremetal/records.js';
import { getNode } from '../store/baremetal/nodes.js';
import { saveNode } from '../store/baremetal/node-writes.js';
import type { TxItem } from '../store/ddb/tx.js';
import { backoffMs, sleep } from '../store/ddb/retry.js';
import { allocationDeleteActions, getAllocation } from '../store/baremetal/allocations.js';
import { log } from '../observability/log.js';
import { driverFor, FAKE_HARDWARE, type HardwareDriver } from './driver.js';
import { executionName, executor } from './executor.js';
import { refusedByLink } from './retries.js';
import { scheduler } from '../bridge/scheduler.js';

export interface NodeActionInput {
  node: string;
  execution: string;
  action: 'power' | 'provision';
  /** power: the target power state; provision: the API target (verb) */
  target: string;
  /** the node's state when the action was accepted */
  from?: string;
  error?: { Error?: string; Cause?: string };
  /** FailNodeAction called by orphan recovery: last_error's reason (no error was caught) */
  reason?: string;
}

export type NodeActionResult = { node: string; execution: string; outcome: 'done' | 'gone' };

export function driverOf(node: NodeRecord): HardwareDriver {
  return driverFor(node.driver) ?? FAKE_HARDWARE;
}

/**
 * Save `next` (with the lock taken by a new execution when `async`) and start the
 * execution. If the execution cannot be started the action runs here instead, so a
 * node is never left locked by an execution that does not exist.
 */
export async function launchNodeAction(
  cur: NodeRecord,
  next: NodeRecord,
  action: NodeActionInput['action'],
  target: string,
): Promise<{ ok: true; node: NodeRecord } | { error: 'stale' }> {
  const execution = executionName('n', cur.uuid);
  const locked: NodeRecord = { ...next, lock: execution, lock_action: { action, target, from: cur.provision_state, at: Date.now() } };
  const saved = refusedByLink(await saveNode(cur, locked, scheduler().links));
  if (!('ok' in saved)) return { error: 'stale' };
  const input: NodeActionInput = { node: cur.uuid, execution, action, target, from: cur.provision_state };
  try {
    await executor().start('node-action', execution, input as unknown as Record<string, unknown>);
  } catch (e) {
    log.warn('node action could not be started, running it in-line', { node: cur.uuid, error: String((e as Error)?.message ?? e) });
    try {
      await advanceNode(input);
    } catch (err) {
      // as Step Functions hands a step's error to NodeActionFailed
      const error = err as Error;
      await failNodeAction({
        ...input,
        error: {
          Error: error?.name ?? 'Error',
          Cause: JSON.stringify({ errorType: error?.name, errorMessage: String(error?.message ?? err), trace: String(error?.stack ?? '') }),
        },
      });
    }
  }
  return { ok: true, node: saved.node };
}

/**
 * Apply `change` to the node as the lock holder and save it; if another writer
 * changed the node meanwhile (an allocation reserving it, a trait edit), re-read and
 * apply again. Returns undefined when the lock is no longer ours.
 */
async function writeLocked(
  uuid: string,
  execution: string,
  change: (n: NodeRecord) => Promise<{ next: NodeRecord; extra?: TxItem[] }>,
): Promise<NodeRecord | undefined> {
  for (let attempt = 0; attempt < 12; attempt++) {
    const cur = await getNode(uuid);
    if (!cur || cur.lock !== execution) return undefined;
    const { next, extra } = await change(cur);
    const out = refusedByLink(await saveNode(cur, next, scheduler().links, extra ?? []));
    if ('ok' in out) return out.node;
    await sleep(backoffMs(attempt));
  }
  throw new Error(`node ${uuid} kept changing while ${execution} held its lock`);
}

/** The AdvanceNode step: run the driver and the remaining events, then release the lock. */
export async function advanceNode(input: NodeActionInput): Promise<NodeActionResult> {
  const gone = { node: input.node, execution: input.execution, outcome: 'gone' as const };
  const done = { node: input.node, execution: input.execution, outcome: 'done' as const };
  const first = await getNode(input.node);
  if (!first || first.lock !== input.execution) return gone;
  const driver = driverOf(first);
  if (input.action === 'power') {
    const state = await driver.setPower(first, input.target);
    const saved = await writeLocked(input.node, input.execution, async (n) => ({
      next: { ...n, power_state: state, target_power_state: null, lock: null, updated_at: isoNow() },
    }));
    return saved ? done : gone;
  }
  // a resumed action (orphan recovery) skips the events already applied
  const full = provisionProgram(input.target, input.from ?? first.provision_state);
  const start = full.findIndex((st) => isActionable(first.provision_state, st.event));
  const program = start < 0 ? [] : full.slice(start);
  let node: NodeRecord = first;
  for (const [i, step] of program.entries()) {
    if (step.driver) await driver[step.driver](node);
    const saved = await writeLocked(input.node, input.execution, async (n) => {
      const moved = processEvent(n.provision_state, step.event, n.target_provision_state);
      const now = isoNow();
      const next: NodeRecord = {
        ...n,
        provision_state: moved.state,
        target_provision_state: moved.target,
        provision_updated_at: now,
        updated_at: now,
        // the last event releases the lock in the same write
        lock: i === program.length - 1 ? null : n.lock,
      };
      const extra: TxItem[] = [];
      if (step.releaseInstance) {
        // tear down: the instance fields go, and with them the node's allocation
        next.instance_info = {};
        next.instance_uuid = null;
        if (n.allocation_uuid) {
          const alloc = await getAllocation(n.allocation_uuid);
          if (alloc) extra.push(...allocationDeleteActions(alloc, n.uuid));
          next.allocation_uuid = null;
        }
      }
      return { next, extra };
    });
    if (!saved) return gone;
    node = saved;
  }
  if (node.lock === input.execution) {
    const saved = await writeLocked(input.node, input.execution, async (n) => ({ next: { ...n, lock: null } }));
    if (!saved) return gone;
  }
  return done;
}

/** Where a failed action leaves the node: Ironic's 'fail' event where there is one. */
export async function failNodeAction(input: NodeActionInput): Promise<NodeActionResult> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const node = await getNode(input.node);
    if (!node || node.lock !== input.execution) return { node: input.node, execution: input.execution, outcome: 'gone' };
    const reason = input.reason ?? failureText(input.error, input.execution);
    const next: NodeRecord = { ...node, lock: null, updated_at: isoNow() };
    if (input.action === 'power') {
      next.target_power_state = null;
      next.last_error = `Failed to change power state to '${input.target}' by '${input.target}': ${reason}`;
    } else {
      try {
        const moved = processEvent(node.provision_state, 'fail', node.target_provision_state);
        next.provision_state = moved.state;
        next.target_provision_state = moved.target;
        next.provision_updated_at = isoNow();
      } catch {
        // no failure transition from here: leave the state, report the error
      }
      next.last_error = reason;
    }
    const out = refusedByLink(await saveNode(node, next, scheduler().links));
    if ('ok' in out) return { node: node.uuid, execution: input.execution, outcome: 'done' };
  }
  throw new Error(`could not record the failure of ${input.execution} on node ${input.node}`);
}

/**
 * What last_error says about an error Step Functions caught: a driver's HardwareError
 * in its own words; anything else — an AWS error naming the account, role and table,
 * a timeout, a bug — only that it happened, under which execution id the detail is
 * logged (here, with the detail).
 */
export function failureText(error: NodeActionInput['error'], execution: string): string {
  if (error?.Error === 'HardwareError') return causeText(error);
  log.error('node action failed unexpectedly', { execution, error: error?.Error, cause: error?.Cause });
  return internalErrorText('Execution', execution);
}

/** the message of a Step Functions error (Lambda puts a JSON document in Cause) */
export function causeText(error: NodeActionInput['error']): string {
  const cause = error?.Cause ?? '';
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: string };
    if (parsed && typeof parsed.errorMessage === 'string') return parsed.errorMessage;
  } catch {
    // not JSON: the cause is the message
  }
  return cause || error?.Error || 'unknown error';
}

/** the first event of a provision verb, as the API applies it */
export function firstProvisionEvent(target: string): string {
  return VERBS[target] ?? target;
}
