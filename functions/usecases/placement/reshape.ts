/**
 * POST /reshaper, a use case (read, plan in core/placement/reshaper.ts, one guarded write;
 * again from fresh reads when cancelled), written as ONE TransactWriteItems: the providers getting new inventory
 * (Update RP: inv, invVer + 1, gen + n, usage deltas; IF gen = the client's and invVer
 * unchanged; refs of custom classes gained / lost), the claim for every consumer (see
 * allocations.ts), the usage aggregates and one change-log entry. Refused (409) if it
 * needs more than DynamoDB's 100 actions; never split.
 */
import { checkReshape, planReshape, reshapeClassesToLookUp, type InventoryReplacement, type ReshapeFailure } from '../../core/placement/reshaper.js';
import type { ConsumerRequest } from '../../core/placement/claim.js';
import { missingResourceClasses } from '../../store/placement/catalog.js';
import { diffRefs, type RefChange } from '../../core/placement/provider-patch.js';
import { refUpdates } from '../../store/placement/refs.js';
import { readClaimState, writePlan } from '../../store/placement/allocations.js';
import { refusedForBaremetal } from './allocations.js';
import { tally } from '../../observability/counters.js';
import { managedInventoryProblem } from '../../core/placement/managed.js';
import { withRetries } from '../../store/ddb/retry.js';

/** ref changes of several providers, one per class (a transaction touches an item once) */
function mergeRefs(changes: RefChange[]): RefChange[] {
  const by = new Map<string, RefChange>();
  for (const c of changes) {
    const cur = by.get(c.name);
    if (cur) cur.delta += c.delta;
    else by.set(c.name, { ...c });
  }
  return [...by.values()];
}

export async function reshape(replacements: InventoryReplacement[], requests: ConsumerRequest[]): Promise<true | ReshapeFailure> {
  tally('claim.claims');
  return withRetries<true | ReshapeFailure>(async () => {
    const { states, providers } = await readClaimState(
      requests,
      replacements.map((r) => r.provider),
    );
    const early =
      refusedForBaremetal(requests, states) ??
      checkReshape(replacements, requests, states, providers) ??
      managedInventoryProblem(replacements, providers);
    if (early) return early;
    const missingClasses = new Set(await missingResourceClasses(reshapeClassesToLookUp(replacements, requests, states, providers)));
    const now = new Date().toISOString();
    const plan = planReshape(replacements, requests, states, providers, { missingClasses, now });
    if ('error' in plan) return plan;
    const refs = refUpdates(
      mergeRefs(plan.inventories.flatMap((i) => diffRefs('resource_class', Object.keys(i.before), Object.keys(i.after)))),
    ).items;
    return writePlan(plan, {
      now,
      inventories: new Map(plan.inventories.map((i) => [i.provider, i.after])),
      extra: refs,
      op: 'allocations.reshape',
      // each provider whose inventory changes: the write is guarded by its generation, so before and after are exact
      providerFacts: plan.inventories.map((i) => {
        const c = plan.providers.get(i.provider);
        const gen = c?.read?.generation ?? providers.get(i.provider)?.generation ?? 0;
        return {
          uuid: i.provider,
          before: { generation: gen, inventories: i.before },
          after: { generation: gen + (c?.generationDelta ?? 0), inventories: i.after },
        };
      }),
    });
  });
}
