/**
 * The local state-machine runner: the SAME ASL files cdk/ deploys, executed in-process
 * by aws-local-stepfunctions, with each Task state mapped to the same TypeScript step
 * the step Lambda exports (wrapped in lambda:invoke's {Payload} shape). Only the local
 * runtime and the tests import this module; Lambda bundles never do.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { log } from '../functions/observability/log.js';
import { MACHINES } from '../functions/conductor/machines.js';
import { setExecutor, type ExecutionStatus, type Executor, type Machine } from '../functions/conductor/executor.js';
import * as findCandidates from '../functions/conductor/steps/find-candidates.js';
import * as reserveNode from '../functions/conductor/steps/reserve-node.js';
import * as failAllocation from '../functions/conductor/steps/fail-allocation.js';
import * as advanceNode from '../functions/conductor/steps/advance-node.js';
import * as failNodeAction from '../functions/conductor/steps/fail-node-action.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

type Step = (input: never) => Promise<unknown>;
const STEP_FUNCTIONS: Record<string, Step> = {
  'find-candidates': findCandidates.handler as Step,
  'reserve-node': reserveNode.handler as Step,
  'fail-allocation': failAllocation.handler as Step,
  'advance-node': advanceNode.handler as Step,
  'fail-node-action': failNodeAction.handler as Step,
};

/** Called before every Task state (tests use it to pause or crash an execution mid-way). */
export type StepInterceptor = (machine: Machine, state: string, input: Record<string, unknown>) => Promise<void> | void;

interface Running {
  machine: Machine;
  abort: () => void;
  settled: boolean;
  result: Promise<unknown>;
}

/** Load an ASL file with its definition substitutions filled in. */
export function loadDefinition(machine: Machine): StateMachineDefinition {
  const spec = MACHINES[machine];
  let text = readFileSync(join(ROOT, spec.file), 'utf8');
  for (const [key, step] of Object.entries(spec.substitutions)) {
    text = text.replaceAll('${' + key + '}', `arn:aws:lambda:local:000000000000:function:berth-${step}`);
  }
  return JSON.parse(text) as StateMachineDefinition;
}

export class LocalRunner implements Executor {
  private readonly machines = new Map<Machine, StateMachine>();
  private readonly executions = new Map<string, Running>();
  interceptor: StepInterceptor | undefined;
  /** Runs every step (tests attribute a step's DynamoDB requests to its own Lambda: its IAM rules). */
  stepContext: (<T>(step: string, run: () => Promise<T>) => Promise<T>) | undefined;
  /** ms each Wait state pauses locally (defaults from machines.ts) */
  waitOverrides: Record<string, number> = {};

  private machine(m: Machine): StateMachine {
    let sm = this.machines.get(m);
    if (!sm) {
      sm = new StateMachine(loadDefinition(m), { validationOptions: { checkArn: false } });
      this.machines.set(m, sm);
    }
    return sm;
  }

  async start(machine: Machine, name: string, input: Record<string, unknown>): Promise<void> {
    if (this.executions.has(name)) throw Object.assign(new Error(`execution ${name} already exists`), { name: 'ExecutionAlreadyExists' });
    const spec = MACHINES[machine];
    const handlers: Record<string, (input: unknown) => Promise<unknown>> = {};
    for (const [state, step] of Object.entries(spec.tasks)) {
      const fn = STEP_FUNCTIONS[step]!;
      handlers[state] = async (params: unknown) => {
        const payload = (params as { Payload: Record<string, unknown> }).Payload;
        if (this.interceptor) await this.interceptor(machine, state, payload);
        const call = () => fn(payload as never);
        return { Payload: await (this.stepContext ? this.stepContext(step, call) : call()), StatusCode: 200 };
      };
    }
    const run = this.machine(machine).run(input as never, {
      overrides: {
        taskResourceLocalHandlers: handlers as never,
        waitTimeOverrides: { ...spec.localWaits, ...this.waitOverrides },
      },
      noThrowOnAbort: true,
      context: { Execution: { Name: name, Input: input as never, StartTime: new Date().toISOString() } },
    });
    const entry: Running = { machine, abort: run.abort, settled: false, result: run.result };
    this.executions.set(name, entry);
    entry.result = run.result
      .catch((e: unknown) => {
        log.error('local execution failed', { machine, execution: name, error: String((e as Error)?.stack ?? e) });
      })
      .finally(() => {
        entry.settled = true;
        this.prune();
      });
  }

  async status(_machine: Machine, name: string): Promise<ExecutionStatus> {
    const e = this.executions.get(name);
    if (!e) return 'unknown';
    return e.settled ? 'ended' : 'running';
  }

  /** Stop an execution where it is (a crashed worker, for fault tests). */
  abort(name: string): boolean {
    const e = this.executions.get(name);
    if (!e || e.settled) return false;
    e.abort();
    e.settled = true;
    return true;
  }

  /** Forget an execution, as if the process that ran it had died. */
  forget(name: string): void {
    this.executions.delete(name);
  }

  /** Resolves when every execution started so far has ended. */
  async idle(): Promise<void> {
    for (;;) {
      const open = [...this.executions.values()].filter((e) => !e.settled);
      if (!open.length) return;
      await Promise.all(open.map((e) => e.result));
    }
  }

  /**
   * Keep the registry bounded in a long-running local stack: forget the oldest ended
   * executions (an unknown execution is treated like an ended one by recovery).
   */
  private prune(max = 5000): void {
    if (this.executions.size <= max) return;
    for (const [name, e] of this.executions) {
      if (this.executions.size <= max / 2) break;
      if (e.settled) this.executions.delete(name);
    }
  }

  running(): number {
    return [...this.executions.values()].filter((e) => !e.settled).length;
  }
}

let shared: LocalRunner | undefined;

/** The process-wide local runner, registered as the executor. */
export function localRunner(): LocalRunner {
  if (!shared) {
    shared = new LocalRunner();
    setExecutor(shared);
  }
  return shared;
}
