/**
 * `npm run bench -- --scenario loadrate [--providers N]`: what bounds the bulk loader
 * (functions/store/placement/bulk.ts, `npx berth load`) against DynamoDB Local. Each case
 * starts its own DynamoDB Local with the options under test and loads the same
 * placeload-shaped providers: on disk (as `npm start` runs it: -sharedDb -dbPath .data/ddb)
 * and in memory (`npm start -- --fresh`), with other loader concurrencies, Java heaps and
 * DynamoDB Local's documented options (-optimizeDbBeforeStartup), and on disk in a tmpfs
 * (no device under the database file). Per case: providers/s, the CPU DynamoDB Local's
 * JVM and the loader used (share of one core over the load), and the write units per
 * provider AWS would bill (the accountant's rules).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { VALUE, perfloadProviders, procCpuSeconds, r1, threeAggregates, type BenchContext, type Scenario } from '../kit.js';
import { ensureTable, startDynamoDbLocal, type DdbLocalOptions } from '../../local/ddb-local.js';
import { berthSchema, meterBatchWrites, sdkStack } from '../../cli/batch-write-units.js';

interface LoadCase {
  name: string;
  /** where the database file lives: the repository's disk, a tmpfs, or nowhere (-inMemory) */
  storage: 'disk' | 'tmpfs' | 'memory';
  concurrency: number;
  heapMb?: number;
  args?: string[];
  jvm?: string[];
}

const CASES: LoadCase[] = [
  { name: 'on disk (npm start), 32 in flight', storage: 'disk', concurrency: 32 },
  { name: 'on disk, 8 in flight', storage: 'disk', concurrency: 8 },
  { name: 'on disk, 128 in flight', storage: 'disk', concurrency: 128 },
  { name: 'on disk, -optimizeDbBeforeStartup', storage: 'disk', concurrency: 32, args: ['-optimizeDbBeforeStartup'] },
  { name: 'on disk, 4 GB heap', storage: 'disk', concurrency: 32, heapMb: 4096 },
  { name: 'on disk in a tmpfs (/dev/shm)', storage: 'tmpfs', concurrency: 32 },
  { name: 'in memory (npm start -- --fresh), 32 in flight', storage: 'memory', concurrency: 32 },
  { name: 'in memory, 128 in flight', storage: 'memory', concurrency: 128 },
];

/** CPU seconds a process has used (kit.ts procCpuSeconds), required here */
function cpuSeconds(pid: number): number {
  const s = procCpuSeconds(pid);
  if (s === undefined) throw new Error(`no CPU figures for process ${pid} (/proc/${pid}/stat)`);
  return s;
}

async function runCase(ctx: BenchContext, c: LoadCase, n: number) {
  const base = c.storage === 'tmpfs' ? '/dev/shm' : join(process.cwd(), '.data');
  if (c.storage !== 'memory') mkdirSync(base, { recursive: true });
  const dir = c.storage === 'memory' ? undefined : mkdtempSync(join(base, 'loadrate-'));
  const opts: DdbLocalOptions = { dataDir: dir, heapMb: c.heapMb, args: c.args, jvm: c.jvm };
  const ddb = await startDynamoDbLocal(opts);
  try {
    const table = 'berth';
    await ensureTable(ddb.endpoint, table);
    process.env.DDB_ENDPOINT = ddb.endpoint;
    process.env.TABLE_NAME = table;
    const { resetConfig } = await import('../../functions/config.js');
    resetConfig();
    const { ddbRaw } = await import('../../functions/store/ddb/client.js');
    const schema = berthSchema(table);
    const units = meterBatchWrites(sdkStack(ddbRaw()), (t) => (t === table ? schema : undefined));
    const { bulkLoadProviders } = await import('../../functions/store/placement/bulk.js');
    const providers = perfloadProviders(n, 0, threeAggregates());
    const java0 = cpuSeconds(ddb.child.pid!);
    const node0 = process.cpuUsage();
    const t0 = performance.now();
    await bulkLoadProviders(providers, { concurrency: c.concurrency });
    const wall = (performance.now() - t0) / 1000;
    const node = process.cpuUsage(node0);
    const rec = {
      kind: 'load-rate',
      key: `loadrate/${c.name}`,
      providers: n,
      storage: c.storage,
      concurrency: c.concurrency,
      options: [...(c.args ?? []), ...(c.heapMb ? [`-Xmx${c.heapMb}m`] : [])],
      wall_s: r1(wall),
      providers_per_s: Math.round(n / wall),
      java_cpu_share: r1((cpuSeconds(ddb.child.pid!) - java0) / wall),
      loader_cpu_share: r1((node.user + node.system) / 1e6 / wall),
      write_units_per_provider: Math.round(((units.write + units.indexWrite) / n) * 100) / 100,
      headline: { providers_per_s: Math.round(n / wall) },
    };
    ctx.emit(rec);
    ctx.say(
      `${c.name.padEnd(48)} ${String(rec.providers_per_s).padStart(6)} providers/s; CPU (cores): DynamoDB Local ${rec.java_cpu_share}, loader ${rec.loader_cpu_share}; ${rec.write_units_per_provider} write units/provider`,
    );
  } finally {
    await ddb.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

export const loadRateScenario: Scenario = {
  name: 'loadrate',
  options: { providers: VALUE, cases: VALUE },
  description: 'what bounds the bulk loader against DynamoDB Local: on disk vs in memory, loader concurrency, heap, documented options',
  optional: true,
  async run(ctx) {
    const n = Number(ctx.args.providers ?? (ctx.quick ? 1000 : 3000));
    const only = ctx.args.cases ? new Set(ctx.args.cases.split(',').map(Number)) : undefined;
    for (const [i, c] of CASES.entries()) if (!only || only.has(i)) await runCase(ctx, c, n);
  },
};
