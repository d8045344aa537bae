/** The tasks the maintenance function runs, in order. */
import { recoverOrphanAllocations } from './orphans.js';
export interface MaintenanceTask {
  name: string;
  /** do one bounded batch of work before `deadline` (ms epoch); report what was done */
  run(ctx: { deadline: number }): Promise<Record<string, unknown>>;
}

export const MAINTENANCE_TASKS: MaintenanceTask[] = [
  // bare-metal allocations whose execution died or never started are taken over and resumed
  { name: 'baremetal-orphan-allocations', run: async ({ deadline }) => ({ ...(await recoverOrphanAllocations({ deadline })) }) },
];
