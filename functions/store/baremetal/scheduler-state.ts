/**
 * What the table says about its bare-metal scheduler (`META` / `baremetal-scheduler`):
 * the switch to BAREMETAL_SCHEDULER=placement and its migration's progress
 * (functions/bridge/migration.ts writes it; `npx berth import-ironic` reads which
 * scheduler a table runs).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { tableName } from '../ddb/client.js';
import { ddb } from '../ddb/reads.js';
import { Expr } from '../ddb/expr.js';
import { metaKey } from '../ddb/keys.js';
import { transact } from '../ddb/tx.js';
import { BM_TX } from './keys.js';

const STATE_KEY = metaKey('baremetal-scheduler');

/** What the META item says about the switch. */
export interface SchedulerState {
  /** the scheduler the last pass migrated to */
  mode?: string;
  /** when a process first saw the placement scheduler (ms epoch) */
  switchedAt?: number;
  /** a pass found every node in agreement (and started SETTLE after switchedAt) */
  complete?: boolean;
  /** the creation sequence of the last node the current pass finished */
  cursor?: number;
  /** nodes given (or corrected) a provider or consumer, in all passes */
  synced?: number;
  /** nodes whose active allocation could not get its consumer: another consumer holds the provider */
  conflicts?: string[];
  /** when the last pass began (ms epoch) */
  passStartedAt?: number;
  completedAt?: string;
}

export async function readSchedulerState(): Promise<SchedulerState> {
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: STATE_KEY, ConsistentRead: true }));
  return (r.Item ?? {}) as SchedulerState;
}

export async function writeSchedulerState(s: SchedulerState): Promise<void> {
  // a one-item transaction (its outcome is known); concurrent passes write the same facts
  await transact([new Expr().putItem({ ...STATE_KEY, ...s })], {
    ...BM_TX,
    change: { op: 'internal', note: 'bare-metal scheduler migration progress' },
  });
}
