/**
 * The bare-metal state machines: their ASL files (deployed by cdk/, run locally by
 * aws-local-stepfunctions), which step Lambda each definition substitution names, and
 * which Task state calls which step. One table for both worlds.
 */
import type { Machine } from './executor.js';

export interface MachineSpec {
  /** ASL file, relative to the repository root */
  file: string;
  /** definitionSubstitutions key -> step (its Lambda entry: stepEntry(step)) */
  substitutions: Record<string, string>;
  /** Task state -> step */
  tasks: Record<string, string>;
  /** Wait states and how long they pause locally (ms) */
  localWaits: Record<string, number>;
}

export const MACHINES: Record<Machine, MachineSpec> = {
  allocation: {
    file: 'cdk/statemachines/node-allocation.asl.json',
    substitutions: {
      FindCandidatesFunctionArn: 'find-candidates',
      ReserveNodeFunctionArn: 'reserve-node',
      FailAllocationFunctionArn: 'fail-allocation',
    },
    tasks: {
      FindCandidates: 'find-candidates',
      ReserveNode: 'reserve-node',
      FailAllocation: 'fail-allocation',
      FailUnexpected: 'fail-allocation',
    },
    localWaits: { WaitForIndex: 100, WaitForLockedNodes: 100 },
  },
  'node-action': {
    file: 'cdk/statemachines/node-action.asl.json',
    substitutions: {
      AdvanceNodeFunctionArn: 'advance-node',
      FailNodeActionFunctionArn: 'fail-node-action',
    },
    tasks: { AdvanceNode: 'advance-node', NodeActionFailed: 'fail-node-action' },
    localWaits: {},
  },
};

/** every step Lambda */
export const STEPS = [...new Set(Object.values(MACHINES).flatMap((m) => Object.values(m.substitutions)))];

/** a step Lambda's entry, relative to the repository root: beside the conductor modules it runs */
export const stepEntry = (step: string): string => `functions/conductor/steps/${step}.ts`;
