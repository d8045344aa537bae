/**
 * The scheduled maintenance function (EventBridge Scheduler in AWS, a timer locally).
 * It runs every registered task in turn; each task works in bounded batches and keeps
 * its progress in the table, so a run that times out simply resumes next time.
 */
import type { ScheduledEvent } from 'aws-lambda';
import { log } from '../observability/log.js';
import { MAINTENANCE_TASKS } from './tasks.js';
import { withMetrics } from '../observability/powertools.js';

export interface TaskReport {
  task: string;
  [k: string]: unknown;
}

export async function runMaintenance(budgetMs = 50_000): Promise<TaskReport[]> {
  const deadline = Date.now() + budgetMs;
  const reports: TaskReport[] = [];
  for (const task of MAINTENANCE_TASKS) {
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

export const handler = withMetrics(async (_event: ScheduledEvent) => runMaintenance());
