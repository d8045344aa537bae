/**
 * Maintenance task `baremetal-placement`: with BAREMETAL_SCHEDULER=placement, until the
 * migration has completed, give the deployment's nodes their resource providers and
 * their active allocations their Placement consumers, a bounded batch per run
 * (store/baremetal/placement-migration.ts; `npx berth migrate-baremetal` does it at once).
 */
import { log } from '../observability/log.js';
import { migrateNodesToPlacement, type MigrationReport } from '../bridge/migration.js';

export async function migrateBaremetalToPlacement(opts: { deadline: number }): Promise<MigrationReport> {
  const report = await migrateNodesToPlacement(opts);
  if (report.conflicts.length) {
    log.warn('bare-metal nodes whose allocation cannot become a Placement consumer: another consumer holds the provider', {
      nodes: report.conflicts,
    });
  }
  return report;
}
