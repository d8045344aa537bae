/**
 * DynamoDB's two capacity modes, priced for a steady load (units per second, by AWS's
 * rules: the same units either way). On demand pays per unit; provisioned pays per unit
 * of capacity-hour, with auto scaling keeping the capacity at `target` of what is consumed
 * (`-c tableCapacity=provisioned:…`, cdk/lib/capacity.ts, whose target and minimum these are), each index with its own
 * capacity at no less than the minimum. Pure: the accountant prints both,
 * test/unit/capacity/billing.test.ts checks them.
 */
import { AUTOSCALING_MIN, AUTOSCALING_TARGET } from '../../cdk/lib/capacity.js';
import { onDemandReadMonthly, onDemandWriteMonthly, PRICES, SECONDS_PER_MONTH } from './prices.js';

export { AUTOSCALING_MIN, AUTOSCALING_TARGET };

export interface CapacityCost {
  /** capacity units provisioned, table and indexes together */
  readCapacity: number;
  writeCapacity: number;
  read: number;
  write: number;
  total: number;
}

const HOURS_PER_MONTH = SECONDS_PER_MONTH / 3600;

/** units/s consumed around the clock, on demand ($ a month) */
export function onDemandMonthly(readPerS: number, writePerS: number): CapacityCost {
  const read = onDemandReadMonthly(readPerS);
  const write = onDemandWriteMonthly(writePerS);
  return { readCapacity: 0, writeCapacity: 0, read, write, total: read + write };
}

/**
 * units/s consumed around the clock, in provisioned mode with auto scaling at `target`:
 * the table's capacity is what it consumes / target (at least `min`), and each of
 * `indexes` keeps at least `min` of its own (their consumption is counted in the table's
 * figure: an upper bound on neither side).
 */
export function provisionedMonthly(readPerS: number, writePerS: number, opts: { indexes: number; min?: number; target?: number }): CapacityCost {
  const target = opts.target ?? AUTOSCALING_TARGET;
  const min = opts.min ?? AUTOSCALING_MIN;
  if (!(target > 0 && target <= 1)) throw new Error(`target utilisation ${target}: expected (0, 1]`);
  const readCapacity = Math.max(min, readPerS / target) + opts.indexes * min;
  const writeCapacity = Math.max(min, writePerS / target) + opts.indexes * min;
  const read = readCapacity * PRICES.dynamodbProvisioned.perRcuHour * HOURS_PER_MONTH;
  const write = writeCapacity * PRICES.dynamodbProvisioned.perWcuHour * HOURS_PER_MONTH;
  return { readCapacity, writeCapacity, read, write, total: read + write };
}
