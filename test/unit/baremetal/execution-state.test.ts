/**
 * Step Functions refuses an execution input over 256 KB and fails an execution whose
 * state grows past it (States.DataLimitExceeded, which no Catch sees). An allocation's
 * execution carries what the request asked for and the candidate nodes; with the
 * request bounds (ALLOCATION_LIMITS) and MAX_CANDIDATES, the largest state any request
 * can produce — every field at its largest at once, a caught error's 32 KB cause
 * included — stays far below that.
 */
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import {
  ALLOCATION_LIMITS,
  MAX_CANDIDATES,
  allocationFailedText,
  allocationLimitProblem,
  resumeLimitText,
} from '../../../functions/core/baremetal/allocations.js';
import { executionInput } from '../../../functions/conductor/allocate.js';
import type { AllocationRecord } from '../../../functions/core/baremetal/records.js';
import { internalErrorText } from '../../../functions/core/errors.js';

/** Step Functions' cap on an execution's input and on any state's data (UTF-8 bytes) */
const STEP_FUNCTIONS_CAP = 256 * 1024;
/** what docs/security.md ("Bad input") promises */
const BOUND = 96 * 1024;
const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');

/** the largest allocation the API accepts: every field at its bound, 4-byte characters wherever a string is free-form */
function largestAllocation(): AllocationRecord {
  const wide = '\u{1D538}'; // 𝔸: 4 bytes in UTF-8
  return {
    uuid: randomUUID(),
    name: 'n'.repeat(255),
    resource_class: wide.repeat(80),
    traits: Array.from({ length: ALLOCATION_LIMITS.traits }, (_, i) => `CUSTOM_${String(i).padStart(2, '0')}${'X'.repeat(246)}`),
    candidate_nodes: Array.from({ length: ALLOCATION_LIMITS.candidateNodes }, () => randomUUID()),
    extra: {},
    owner: wide.repeat(ALLOCATION_LIMITS.owner),
    state: 'allocating',
    last_error: null,
    node_uuid: null,
    created_at: '2026-11-25T00:00:00.000000+00:00',
    updated_at: null,
    exec: null,
    exec_at: Date.now(),
    seq: 1_790_000_000_000_000,
  };
}

describe('an allocation execution’s state', () => {
  it('the largest request is accepted, one more entry is a 400', () => {
    const a = largestAllocation();
    expect(a.traits.every((t) => t.length === 255)).toBe(true);
    expect(allocationLimitProblem(a)).toBeUndefined();
    expect(allocationLimitProblem({ ...a, candidate_nodes: [...a.candidate_nodes, randomUUID()] })).toBe(
      `Invalid input for field/attribute candidate_nodes. ${ALLOCATION_LIMITS.candidateNodes + 1} nodes given, at most ${ALLOCATION_LIMITS.candidateNodes} are allowed.`,
    );
    expect(allocationLimitProblem({ ...a, traits: [...a.traits, 'CUSTOM_Y'] })).toContain('field/attribute traits');
    expect(allocationLimitProblem({ ...a, owner: `${a.owner}x` })).toContain('field/attribute owner');
  });

  it(`stays under ${BOUND / 1024} KB (Step Functions allows ${STEP_FUNCTIONS_CAP / 1024} KB) with every field at its largest at once`, () => {
    const a = largestAllocation();
    const exec = `a-${a.uuid}-0123abcd`;
    const input = executionInput(a, exec);
    const candidates = Array.from({ length: MAX_CANDIDATES }, () => [randomUUID(), 1_790_000_000_000_000 + Math.floor(Math.random() * 1e9)]);
    // what a step can add: the candidates, a failure text naming every trait, a caught
    // error (Step Functions keeps at most 32,768 characters of its cause, 256 of its name;
    // the causes here are the step Lambdas' own error texts)
    const state = {
      ...input,
      outcome: 'candidates',
      candidates,
      more: true,
      findAttempt: 1,
      reserveAttempt: 2,
      reason: allocationFailedText(a.uuid, `no suitable nodes have the requested traits ${a.traits.join(', ')}`),
      error: { Error: 'E'.repeat(256), Cause: 'c'.repeat(32_768) },
    };
    expect(bytes(input)).toBeLessThan(32 * 1024);
    expect(bytes(state)).toBeLessThan(BOUND);
    // the last_error texts a failure stores are short whatever the input
    expect(resumeLimitText(3).length).toBeLessThan(200);
    expect(internalErrorText('Execution', exec).length).toBeLessThan(200);
  });

  it('a node action’s state is small too (its target is one of Ironic’s verbs or power states)', () => {
    const state = {
      node: randomUUID(),
      execution: `n-${randomUUID()}-0123abcd`,
      action: 'provision',
      target: 'rebuild',
      from: 'active',
      error: { Error: 'E'.repeat(256), Cause: 'c'.repeat(32_768) },
      reason: resumeLimitText(99),
    };
    expect(bytes(state)).toBeLessThan(BOUND);
  });
});
