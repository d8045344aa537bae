/**
 * Metering a bench scenario's in-process stack for a while: a metering proxy
 * (measure/meter/) in front of its DynamoDB, this process's handlers pointed at it for
 * the duration of `fn`, then back. The scenarios that report units (claims, usages,
 * candidates' steady state) take them from here: the accountant's rules, one ledger.
 */
import type { CallRecord } from '../ledger.js';
import { startMeterProxy, type MeterProxy } from './proxy.js';
import type { RunningStack } from '../../local/start.js';

export async function metered<T>(stack: RunningStack, fn: (meter: MeterProxy) => Promise<T>): Promise<{ value: T; records: CallRecord[] }> {
  const { resetConfig } = await import('../../functions/config.js');
  const meter = await startMeterProxy(stack.ddbEndpoint);
  const before = process.env.DDB_ENDPOINT;
  process.env.DDB_ENDPOINT = meter.endpoint;
  resetConfig();
  try {
    const value = await fn(meter);
    return { value, records: [...meter.records] };
  } finally {
    process.env.DDB_ENDPOINT = before;
    resetConfig();
    await meter.stop();
  }
}

/** units of a set of records, and bytes per key family */
export function unitsOf(records: CallRecord[]): {
  calls: number;
  read: number;
  write: number;
  index: number;
  byFamily: Record<string, { read: number; write: number; bytes: number }>;
} {
  const out = { calls: records.length, read: 0, write: 0, index: 0, byFamily: {} as Record<string, { read: number; write: number; bytes: number }> };
  for (const r of records) {
    out.read += r.read;
    out.write += r.write;
    out.index += r.indexWrite;
    for (const k of r.keys) {
      const f = (out.byFamily[k.space === 'table' ? k.pk.split('#')[0]! : `${k.space}:${k.pk.split('#')[0]}`] ??= { read: 0, write: 0, bytes: 0 });
      f.read += k.read;
      f.write += k.write;
      f.bytes += k.bytes;
    }
  }
  return out;
}
