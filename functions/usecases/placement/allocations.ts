/**
 * Placement's claims as use cases (docs/architecture.md, "Layers"): read what the claim
 * touches (store), plan it in the core (functions/core/placement/claim.ts), write the plan
 * as ONE guarded transaction (store) — and when DynamoDB cancelled it (a concurrent write,
 * a condition that no longer holds), read and plan again from fresh reads (full-jitter
 * backoff, bounded; running out is a 409 placement.concurrent_update). A domain answer
 * (over capacity, generation mismatch) comes from a fresh plan, never from a stale one.
 */
import { config } from '../../config.js';
import {
  checkConsumerGenerations,
  checkProvidersExist,
  classesToLookUp,
  planAllocations,
  type ClaimFailure,
  type ClaimPlan,
  type ConsumerRequest,
  type ConsumerState,
} from '../../core/placement/claim.js';
import { managedConsumerProblem } from '../../core/placement/managed.js';
import { tally } from '../../observability/counters.js';
import { RETRY, withRetries } from '../../store/ddb/retry.js';
import { missingResourceClasses } from '../../store/placement/catalog.js';
import { getConsumer } from '../../store/placement/consumers.js';
import { readClaimState, writePlan } from '../../store/placement/allocations.js';

export interface ClaimOptions {
  /** attempts before giving up with 409 placement.concurrent_update */
  maxAttempts?: number;
}

/** A consumer managed elsewhere is its manager's to write while the manager runs (BAREMETAL_SCHEDULER=placement). */
export function refusedForBaremetal(requests: ConsumerRequest[], states: ReadonlyMap<string, ConsumerState>): ClaimFailure | undefined {
  return config().baremetal.scheduler === 'placement' ? managedConsumerProblem(requests, states) : undefined;
}

/** Replace the allocations of the requested consumers (one transaction). */
export async function claimAllocations(requests: ConsumerRequest[], opts: ClaimOptions = {}): Promise<true | ClaimFailure> {
  tally('claim.claims');
  return withRetries<true | ClaimFailure>(async () => {
    const { states, providers } = await readClaimState(requests);
    const early = refusedForBaremetal(requests, states) ?? checkConsumerGenerations(requests, states) ?? checkProvidersExist(requests, providers);
    if (early) return early;
    const missingClasses = new Set(await missingResourceClasses(classesToLookUp(requests, states, providers)));
    const now = new Date().toISOString();
    const plan = planAllocations(requests, states, providers, { missingClasses, now });
    if ('error' in plan) return plan;
    return writePlan(plan, { now });
  }, opts.maxAttempts);
}

/**
 * DELETE /allocations/{consumer}: remove every allocation of a consumer that has a
 * record (legacy rows are invisible here, as upstream). Provider generations are not
 * bumped (upstream's delete_all does not). False when there is nothing to delete.
 */
export async function deleteConsumerAllocations(consumer: string): Promise<boolean | ClaimFailure> {
  return withRetries<boolean | ClaimFailure>(async () => {
    const rec = await getConsumer(consumer);
    if (!rec) return false;
    const refused = refusedForBaremetal(
      [{ uuid: consumer, allocations: {}, project: rec.project, user: rec.user, generation: { check: false } }],
      new Map([[consumer, { record: rec }]]),
    );
    if (refused) return refused;
    const plan: ClaimPlan = { providers: new Map(), rows: [], consumers: [{ uuid: consumer, before: rec }] };
    for (const [rp, res] of Object.entries(rec.allocations)) {
      plan.providers.set(rp, {
        uuid: rp,
        generationDelta: 0,
        usedDelta: Object.fromEntries(Object.entries(res).map(([rc, n]) => [rc, -n])),
        limits: {},
        allocsDelta: -1,
      });
      plan.rows.push({ provider: rp, consumer });
    }
    const r = await writePlan(plan, { now: new Date().toISOString(), op: 'allocations.delete' });
    return r === true ? true : RETRY;
  });
}
