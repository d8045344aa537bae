/**
 * Orphaned bare-metal allocations (the seed's "HA and takeover"): an allocation still
 * `allocating` whose execution has ended or vanished — a crashed worker, a lost
 * StartExecution, a local process that restarted — is taken over and resumed.
 *
 * Takeover is a conditional write on the allocation's execution attribute (Ironic's
 * conductor_affinity): SET exec = <new> IF state = allocating AND exec = <old>. Of
 * several recoverers racing for the same allocation exactly one succeeds; every step
 * of the old execution is conditioned on exec = <old>, so it can no longer write.
 */
import { ALLOCATION_STATES, allocationFailedText, resumeLimitText } from '../core/baremetal/allocations.js';
import { failAllocation, queryAllocations, takeOverAllocation } from '../store/baremetal/allocations.js';
import { getNode, queryNodes } from '../store/baremetal/nodes.js';
import { saveNode } from '../store/baremetal/node-writes.js';
import { scheduler } from '../bridge/scheduler.js';
import { executionName, executor, executorConfigured } from '../conductor/executor.js';
import { executionInput } from '../conductor/allocate.js';
import { failNodeAction } from '../conductor/node-actions.js';
import { log } from '../observability/log.js';
import { config } from '../config.js';

export interface OrphanReport {
  checked: number;
  resumed: number;
  /** another recoverer (or the allocation's own progress) won the takeover */
  lost: number;
  /** still running, or too young to judge */
  skipped: number;
  /** takeovers whose new execution failed to start (retried next run) */
  failedStarts: number;
  /** resumed BAREMETAL_MAX_RESUMES times already: failed instead of resumed again */
  abandoned: number;
}

const emptyReport = (): OrphanReport => ({ checked: 0, resumed: 0, lost: 0, skipped: 0, failedStarts: 0, abandoned: 0 });

/** how long a freshly created allocation may wait for its execution to show up */
export function orphanGraceMs(): number {
  return config().baremetal.orphanGraceS * 1000;
}

export async function recoverOrphanAllocations(opts: { deadline?: number; graceMs?: number } = {}): Promise<OrphanReport> {
  const report = emptyReport();
  if (!executorConfigured()) return report;
  const grace = opts.graceMs ?? orphanGraceMs();
  const stuck = await queryAllocations({ state: ALLOCATION_STATES.ALLOCATING });
  for (const a of stuck) {
    if (opts.deadline !== undefined && Date.now() > opts.deadline) break;
    report.checked++;
    if (Date.now() - a.exec_at < grace) {
      report.skipped++;
      continue;
    }
    const status = a.exec ? await executor().status('allocation', a.exec) : 'unknown';
    if (status === 'running') {
      report.skipped++;
      continue;
    }
    // an allocation whose executions keep dying (a state Step Functions refuses, a
    // start that always fails) is not resumed for ever: it fails, saying so
    const resumes = a.resumes ?? 0;
    if (resumes >= config().baremetal.maxResumes) {
      const text = allocationFailedText(a.uuid, resumeLimitText(resumes));
      if ('ok' in (await failAllocation(a, a.exec, text))) {
        report.abandoned++;
        log.warn('allocation failed after too many resumes', { allocation: a.uuid, execution: a.exec, resumes });
      } else report.lost++;
      continue;
    }
    const next = executionName('a', a.uuid);
    // lost: another recoverer won; stale: not applied (a concurrent transaction), next run looks again
    if (!('ok' in (await takeOverAllocation(a, a.exec, next)))) {
      report.lost++;
      continue;
    }
    log.info('taking over allocation', { allocation: a.uuid, from: a.exec, to: next, was: status });
    try {
      await executor().start('allocation', next, executionInput(a, next));
      report.resumed++;
    } catch (e) {
      report.failedStarts++;
      log.error('could not resume allocation', { allocation: a.uuid, error: String((e as Error)?.message ?? e) });
    }
  }
  return report;
}

/**
 * Node actions whose execution died (a local process restart, a state machine that
 * timed out) would leave the node locked — every write refused with NodeLocked — and
 * perhaps mid-transition. Like allocations they are taken over (a version-checked
 * write of a new lock) and resumed: the new execution skips the events already
 * applied. This reads every node (projected): the task runs with the maintenance
 * schedule, not per request.
 */
export async function recoverStaleNodeActions(opts: { deadline?: number; graceMs?: number } = {}): Promise<OrphanReport> {
  const report = emptyReport();
  if (!executorConfigured()) return report;
  const grace = opts.graceMs ?? orphanGraceMs();
  const locked = (await queryNodes()).filter((n) => n.lock);
  for (const listed of locked) {
    if (opts.deadline !== undefined && Date.now() > opts.deadline) break;
    report.checked++;
    const n = await getNode(listed.uuid);
    if (!n?.lock || !n.lock_action || Date.now() - n.lock_action.at < grace) {
      report.skipped++;
      continue;
    }
    if ((await executor().status('node-action', n.lock)) === 'running') {
      report.skipped++;
      continue;
    }
    const { action, target, from } = n.lock_action;
    const resumes = n.lock_action.resumes ?? 0;
    if (resumes >= config().baremetal.maxResumes) {
      // the node's failure transition and last_error, the lock released (if still this one's)
      try {
        const out = await failNodeAction({ node: n.uuid, execution: n.lock, action, target, from, reason: resumeLimitText(resumes) });
        if (out.outcome === 'done') {
          report.abandoned++;
          log.warn('node action failed after too many resumes', { node: n.uuid, execution: n.lock, resumes });
        } else report.lost++;
      } catch (e) {
        // the node kept changing: the next run looks again
        report.lost++;
        log.warn('could not fail node action', { node: n.uuid, error: String((e as Error)?.message ?? e) });
      }
      continue;
    }
    const next = executionName('n', n.uuid);
    const out = await saveNode(n, { ...n, lock: next, lock_action: { ...n.lock_action, at: Date.now(), resumes: resumes + 1 } }, scheduler().links);
    if (!('ok' in out)) {
      report.lost++;
      continue;
    }
    log.info('taking over node action', { node: n.uuid, from: n.lock, to: next });
    try {
      await executor().start('node-action', next, { node: n.uuid, execution: next, action, target, from });
      report.resumed++;
    } catch (e) {
      report.failedStarts++;
      log.error('could not resume node action', { node: n.uuid, error: String((e as Error)?.message ?? e) });
    }
  }
  return report;
}
