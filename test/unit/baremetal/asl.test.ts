/**
 * The state machine definitions: what cdk/ deploys is what the local runner runs, every
 * substitution and Task state maps to a step Lambda, and the control flow does what
 * the steps expect (run here with stub steps in aws-local-stepfunctions).
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { StateMachine } from 'aws-local-stepfunctions';
import { MACHINES, STEPS, stepEntry } from '../../../functions/conductor/machines.js';
import { loadDefinition } from '../../../local/state-machines.js';
import * as findCandidates from '../../../functions/conductor/steps/find-candidates.js';
import * as reserveNode from '../../../functions/conductor/steps/reserve-node.js';
import * as failAllocation from '../../../functions/conductor/steps/fail-allocation.js';
import * as advanceNode from '../../../functions/conductor/steps/advance-node.js';
import * as failNodeAction from '../../../functions/conductor/steps/fail-node-action.js';

const STEP_MODULES: Record<string, { handler: unknown }> = {
  'find-candidates': findCandidates,
  'reserve-node': reserveNode,
  'fail-allocation': failAllocation,
  'advance-node': advanceNode,
  'fail-node-action': failNodeAction,
};

const ROOT = join(import.meta.dirname, '..', '..', '..');

describe('ASL files', () => {
  for (const [machine, spec] of Object.entries(MACHINES)) {
    it(`${machine}: every substitution and Task state maps to a step Lambda`, () => {
      const text = readFileSync(join(ROOT, spec.file), 'utf8');
      const placeholders = [...text.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]!);
      expect(new Set(placeholders)).toEqual(new Set(Object.keys(spec.substitutions)));
      const def = JSON.parse(text);
      const tasks = Object.entries(def.States as Record<string, { Type: string; Resource?: string }>).filter(([, s]) => s.Type === 'Task');
      expect(tasks.map(([n]) => n).sort()).toEqual(Object.keys(spec.tasks).sort());
      for (const [, s] of tasks) expect(s.Resource).toBe('arn:aws:states:::lambda:invoke');
      for (const step of Object.values(spec.tasks)) expect(STEPS).toContain(step);
      for (const wait of Object.keys(spec.localWaits)) expect(def.States[wait]?.Type).toBe('Wait');
    });
  }
  it('every step has a Lambda entry exporting handler', () => {
    expect(Object.keys(STEP_MODULES).sort()).toEqual([...STEPS].sort());
    for (const step of STEPS) {
      expect(existsSync(join(ROOT, stepEntry(step)))).toBe(true);
      expect(typeof STEP_MODULES[step]!.handler).toBe('function');
    }
  });
});

type Step = (input: any) => any;
async function runAllocation(steps: Record<string, Step>) {
  const sm = new StateMachine(loadDefinition('allocation'), { validationOptions: { checkArn: false } });
  const calls: string[] = [];
  const handlers: Record<string, (p: any) => Promise<any>> = {};
  for (const state of Object.keys(MACHINES.allocation.tasks)) {
    handlers[state] = async (params: any) => {
      calls.push(state);
      const fn = steps[state];
      if (!fn) throw new Error(`unexpected ${state}`);
      return { Payload: await fn(params.Payload), StatusCode: 200 };
    };
  }
  const run = sm.run({ allocation: 'a1', execution: 'e1', spec: { uuid: 'a1' } } as never, {
    overrides: { taskResourceLocalHandlers: handlers as never, waitTimeOverrides: { WaitForIndex: 1, WaitForLockedNodes: 1 } },
  });
  const result = await run.result;
  return { calls, result };
}

describe('allocation state machine flow', () => {
  it('finds, reserves, done', async () => {
    const { calls } = await runAllocation({
      FindCandidates: (i) => ({ ...i, outcome: 'candidates', candidates: [['n1', 1]] }),
      ReserveNode: (i) => ({ ...i, outcome: 'reserved', node: 'n1' }),
    });
    expect(calls).toEqual(['FindCandidates', 'ReserveNode']);
  });

  it('looks at the index again after a wait, retries held nodes after a wait, then fails', async () => {
    let finds = 0;
    let reserves = 0;
    let failed: any;
    const { calls } = await runAllocation({
      FindCandidates: (i) => ({ ...i, outcome: ++finds === 1 ? 'wait' : 'candidates', candidates: [['n1', 1]] }),
      ReserveNode: (i) => ({ ...i, outcome: ++reserves < 3 ? 'retry' : 'failed', reason: 'why' }),
      FailAllocation: (i) => {
        failed = i;
        return { ...i, outcome: 'done' };
      },
    });
    expect(calls).toEqual(['FindCandidates', 'FindCandidates', 'ReserveNode', 'ReserveNode', 'ReserveNode', 'FailAllocation']);
    expect(failed).toMatchObject({ allocation: 'a1', execution: 'e1', reason: 'why' });
  });

  it('an exception in a step becomes an error state via FailUnexpected, with the context it needs', async () => {
    let got: any;
    const { calls } = await runAllocation({
      FindCandidates: () => {
        throw new Error('store exploded');
      },
      FailUnexpected: (i) => {
        got = i;
        return { ...i, outcome: 'done' };
      },
    });
    expect(calls).toEqual(['FindCandidates', 'FailUnexpected']);
    expect(got).toMatchObject({ allocation: 'a1', execution: 'e1', spec: { uuid: 'a1' } });
    expect(JSON.stringify(got.error)).toContain('store exploded');
  });

  it('a gone allocation simply ends', async () => {
    const { calls } = await runAllocation({ FindCandidates: (i) => ({ ...i, outcome: 'gone' }) });
    expect(calls).toEqual(['FindCandidates']);
  });
});
