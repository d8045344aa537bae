/**
 * Starting and inspecting state-machine executions, the same way in AWS and locally:
 *   AWS:   Step Functions StartExecution / DescribeExecution on the state machines
 *          whose ARNs cdk/ puts in ALLOCATION_STATE_MACHINE_ARN / NODE_ACTION_STATE_MACHINE_ARN;
 *   local: the same ASL files run in-process by aws-local-stepfunctions
 *          (local/state-machines.ts registers itself with setExecutor).
 * Execution names are chosen by Berth and recorded (allocation.exec, node.lock) before
 * the execution starts, so an execution that never started or died is detectable.
 */
import { DescribeExecutionCommand, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { randomBytes } from 'node:crypto';
import { config } from '../config.js';
import { tracedInInvocations } from '../observability/powertools.js';

export type Machine = 'allocation' | 'node-action';
export type ExecutionStatus = 'running' | 'ended' | 'unknown';

export interface Executor {
  start(machine: Machine, name: string, input: Record<string, unknown>): Promise<void>;
  status(machine: Machine, name: string): Promise<ExecutionStatus>;
}

/** A unique execution name (<= 80 chars, [A-Za-z0-9-_]). */
export function executionName(prefix: 'a' | 'n', uuid: string): string {
  return `${prefix}-${uuid}-${randomBytes(4).toString('hex')}`;
}

/** the state machines cdk/ deployed (their ARNs come from the environment through config) */
function arnOf(machine: Machine): string | undefined {
  const b = config().baremetal;
  return machine === 'allocation' ? b.allocationStateMachineArn : b.nodeActionStateMachineArn;
}

class StepFunctionsExecutor implements Executor {
  // X-Ray subsegments for the calls made inside an invocation (observability/powertools.ts)
  private client = tracedInInvocations((trace) => trace(new SFNClient({})));

  private arn(machine: Machine): string {
    const arn = arnOf(machine);
    if (!arn) throw new Error(`no state machine ARN for ${machine} (ALLOCATION_STATE_MACHINE_ARN / NODE_ACTION_STATE_MACHINE_ARN)`);
    return arn;
  }

  async start(machine: Machine, name: string, input: Record<string, unknown>): Promise<void> {
    await this.client().send(new StartExecutionCommand({ stateMachineArn: this.arn(machine), name, input: JSON.stringify(input) }));
  }

  async status(machine: Machine, name: string): Promise<ExecutionStatus> {
    // arn:aws:states:<region>:<account>:stateMachine:<sm>  ->  ...:execution:<sm>:<name>
    const executionArn = `${this.arn(machine).replace(':stateMachine:', ':execution:')}:${name}`;
    try {
      const r = await this.client().send(new DescribeExecutionCommand({ executionArn }));
      return r.status === 'RUNNING' || r.status === 'PENDING_REDRIVE' ? 'running' : 'ended';
    } catch (e) {
      if ((e as Error).name === 'ExecutionDoesNotExist') return 'unknown';
      throw e;
    }
  }
}

let current: Executor | undefined;

/** Use this executor from now on (the local runtime, tests). */
export function setExecutor(e: Executor | undefined): void {
  current = e;
}

/** Is there anything to run executions with (an ARN in the environment, or the local runner)? */
export function executorConfigured(): boolean {
  return !!current || !!arnOf('allocation') || !!arnOf('node-action');
}

export function executor(): Executor {
  if (current) return current;
  if (arnOf('allocation') || arnOf('node-action')) {
    current = new StepFunctionsExecutor();
    return current;
  }
  throw new Error('no state-machine executor: set ALLOCATION_STATE_MACHINE_ARN or start the local runner');
}
