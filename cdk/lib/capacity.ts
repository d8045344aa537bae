/**
 * The table's capacity mode (`-c tableCapacity`; docs/cost.md, "Capacity mode"):
 *  - `on-demand` (the default): pay per request unit, no capacity to plan; right for a
 *    small or spiky cloud;
 *  - `provisioned:<max read units>:<max write units>`: capacity-hours, auto scaled between
 *    AUTOSCALING_MIN and the maxima to keep AUTOSCALING_TARGET of it in use, the table and
 *    each index alike — about 40 % of on demand's price for a steady load (a large
 *    cloud's), at the price of a ceiling (requests above the maximum are throttled; the
 *    SDK retries them, writes stay all-or-nothing) and of auto scaling's minutes to follow
 *    a sudden rise (DynamoDB's burst capacity covers up to five minutes of unused capacity).
 * measure/accountant/billing.ts prices both with the same target.
 */
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';

/** auto scaling's target utilisation, as a fraction */
export const AUTOSCALING_TARGET = 0.7;
/** the capacity a table or index keeps at least (units/s, read and write each) */
export const AUTOSCALING_MIN = 5;
/** DynamoDB's default account quota per table (read or write units); higher needs a quota increase */
export const TABLE_QUOTA_UNITS = 40_000;

export type TableCapacity = { mode: 'on-demand' } | { mode: 'provisioned'; maxRead: number; maxWrite: number };

export class CapacityConfigError extends Error {}

/** `-c tableCapacity` as written (undefined: on demand); throws CapacityConfigError saying why a value cannot work */
export function parseTableCapacity(v: string | undefined): TableCapacity {
  if (v === undefined || v === '' || v === 'on-demand') return { mode: 'on-demand' };
  const m = /^provisioned:(\d+):(\d+)$/.exec(v);
  if (!m) throw new CapacityConfigError(`-c tableCapacity=${v}: expected on-demand or provisioned:<max read units>:<max write units>`);
  const [maxRead, maxWrite] = [Number(m[1]), Number(m[2])];
  for (const [what, n] of [
    ['read', maxRead],
    ['write', maxWrite],
  ] as const) {
    if (n < AUTOSCALING_MIN) throw new CapacityConfigError(`-c tableCapacity=${v}: the maximum ${what} capacity must be at least ${AUTOSCALING_MIN}`);
    if (n > TABLE_QUOTA_UNITS) {
      throw new CapacityConfigError(
        `-c tableCapacity=${v}: ${n} ${what} units is above DynamoDB's default quota of ${TABLE_QUOTA_UNITS} per table (ask AWS for more first, or stay on demand)`,
      );
    }
  }
  return { mode: 'provisioned', maxRead, maxWrite };
}

/** the table's billing for `c` (the indexes inherit it) */
export function tableBilling(c: TableCapacity): dynamodb.Billing {
  if (c.mode === 'on-demand') return dynamodb.Billing.onDemand();
  const scaled = (max: number) =>
    dynamodb.Capacity.autoscaled({ minCapacity: AUTOSCALING_MIN, maxCapacity: max, targetUtilizationPercent: AUTOSCALING_TARGET * 100 });
  return dynamodb.Billing.provisioned({ readCapacity: scaled(c.maxRead), writeCapacity: scaled(c.maxWrite) });
}
