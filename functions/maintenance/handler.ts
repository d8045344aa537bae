/**
 * The scheduled maintenance function (EventBridge Scheduler in AWS, a timer locally).
 * It runs every registered task in turn; each task works in bounded batches and keeps
 * its progress in the table, so a run that times out simply resumes next time.
 */
import type { ScheduledEvent } from 'aws-lambda';
import { log } from '../observability/log.js';
import { MAINTENANCE_TASKS } from './tasks.js';
import { withMetrics } from '../observability/powertools.js';
import { forgetLayout, layoutVerdict, readLayoutRecord } from '../store/layout/state.js';
import { openMigration } from '../store/layout/migrate.js';

export interface TaskReport {
  task: string;
  [k: string]: unknown;
}

export async function runMaintenance(budgetMs = 50_000): Promise<TaskReport[]> {
  const deadline = Date.now() + budgetMs;
  const reports: TaskReport[] = [];
  for (const task of MAINTENANCE_TASKS) {
    // a table this release does not serve (yet) is left alone, but for its migration
    if (task.name !== 'layout' && !(await layoutVerdict()).serve) {
      reports.push({ task: task.name, skipped: 'table layout not served' });
      continue;
    }
    try {
      const r = await task.run({ deadline });
      reports.push({ task: task.name, ...r });
    } catch (e) {
      log.error('maintenance task failed', { task: task.name, error: String((e as Error)?.stack ?? e) });
      reports.push({ task: task.name, error: String((e as Error)?.message ?? e) });
    }
  }
  log.info('maintenance run', { reports });
  return reports;
}

/**
 * The deploy's last step (cdk/lib: a trigger that runs once every function is the new
 * release) sends `{ "berth": "deployed" }`: a table waiting at the previous layout may
 * now migrate — nothing of the previous release serves it any more.
 */
export interface DeployedEvent {
  berth: 'deployed';
}

export const handler = withMetrics(async (event: ScheduledEvent | DeployedEvent) => {
  if ((event as DeployedEvent).berth === 'deployed') {
    forgetLayout();
    const opened = await openMigration('deploy');
    log.info('deploy finished: table layout', { layout: await readLayoutRecord(), opened });
  }
  return runMaintenance();
});
