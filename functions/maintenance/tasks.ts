/** The tasks the maintenance function runs, in order. */
import { migrateIncompleteConsumers } from './consumers.js';
import { recoverOrphanAllocations, recoverStaleNodeActions } from './orphans.js';
import { refreshForestImage } from './image.js';
import { recoverIntents } from '../store/ddb/intents/recovery.js';
import { migrateBaremetalToPlacement } from './baremetal-placement.js';
import { migrateLayout } from '../store/layout/migrate.js';

export interface MaintenanceTask {
  name: string;
  /** do one bounded batch of work before `deadline` (ms epoch); report what was done */
  run(ctx: { deadline: number }): Promise<Record<string, unknown>>;
}

export const MAINTENANCE_TASKS: MaintenanceTask[] = [
  // the table's item layout: an online migration from the previous release's (docs/items.md,
  // "Layout versions and upgrades"); while the table is not served, the only task that runs
  { name: 'layout', run: async ({ deadline }) => ({ ...(await migrateLayout({ deadline })) }) },
  // changes larger than one transaction whose writer is gone: finished after their commit point, undone before it
  { name: 'large-changes', run: async () => ({ ...(await recoverIntents()) }) },
  // allocations imported without consumer records get one (seed 000's online migration)
  { name: 'incomplete-consumers', run: async ({ deadline }) => ({ ...(await migrateIncompleteConsumers({ deadline })) }) },
  // BAREMETAL_SCHEDULER=placement: nodes get their providers and allocations their consumers (until done)
  { name: 'baremetal-placement', run: async ({ deadline }) => ({ ...(await migrateBaremetalToPlacement({ deadline })) }) },
  // bare-metal allocations whose execution died or never started are taken over and resumed
  { name: 'baremetal-orphan-allocations', run: async ({ deadline }) => ({ ...(await recoverOrphanAllocations({ deadline })) }) },
  // bare-metal power/provision actions whose execution died: taken over and resumed
  { name: 'baremetal-stale-node-actions', run: async ({ deadline }) => ({ ...(await recoverStaleNodeActions({ deadline })) }) },
  // the forest image new Lambda containers load instead of reading every provider
  { name: 'forest-image', run: async () => ({ ...(await refreshForestImage()) }) },
];
