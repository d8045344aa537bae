/** The tasks the maintenance function runs, in order. */
export interface MaintenanceTask {
  name: string;
  /** do one bounded batch of work before `deadline` (ms epoch); report what was done */
  run(ctx: { deadline: number }): Promise<Record<string, unknown>>;
}

export const MAINTENANCE_TASKS: MaintenanceTask[] = [];
