/**
 * `npm run chaos`: the fault suite's workload (test/integration/faults/workload.ts),
 * longer, at several DynamoDB fault rates, through the fault and lag injector
 * (local/ddb-faults.ts) in front of one DynamoDB Local, with both APIs' real handlers
 * in this process. For each rate (0 = the no-fault baseline) it reports requests,
 * answers by status, invariants held / broken, p50 / p99 latency, the faults injected
 * and the write outcomes the store had to resolve.
 *
 *   npm run chaos [-- --rates 0,0.05,0.2] [--scale 1] [--lag 250] [--seed 1] [--json FILE] [--samples] [--warmup false]
 *
 * A short unreported pass at 0 % warms the process first.
 *
 * Exits 1 if any invariant broke.
 */
import { appendFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { ensureTable, startDynamoDbLocal } from '../local/ddb-local.js';
import { NO_FAULTS, startFaultProxy, type FaultProxy } from '../local/ddb-faults.js';
import {
  baremetalWorkload,
  byStatus,
  checkBaremetal,
  checkPlacementTotals,
  claimsWorkload,
  consumerRaces,
  freshCreates,
  http,
  percentile,
  placementWorld,
  providerRaces,
  Recorder,
  type BaremetalWorld,
} from '../test/integration/faults/workload.js';
import { closeServers } from '../local/servers.js';
import { commandLine, plainErrors } from '../scripts/args.js';

const STRING = { type: 'string' } as const;
const CHAOS_OPTIONS = {
  rates: STRING,
  scale: STRING,
  lag: STRING,
  seed: STRING,
  json: STRING,
  samples: { type: 'boolean' },
  warmup: STRING,
} as const;

function args(argv: string[]): Record<string, string> {
  const { values } = commandLine(argv, CHAOS_OPTIONS, { ...plainErrors(), unknown: (a) => new Error(`unexpected argument ${a}`) });
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, String(v)]));
}

interface RunReport {
  rate: number;
  lagMs: number;
  requests: number;
  byStatus: Record<string, number>;
  invariantsBroken: number;
  violations: string[];
  p50: number;
  p99: number;
  /** the same for the 2xx answers only (the 409s of capacity races are fast) */
  ok50: number;
  ok99: number;
  faults: Record<string, number>;
  ddbCalls: number;
  outcomesUnknown: number;
  resolvedCommitted: number;
  resolvedNotCommitted: number;
  bareMetal: { active: number; error: number; nodes: number };
  /** the first body of each (request, status) that was not a 2xx */
  samples: Record<string, string>;
  seconds: number;
}

async function main() {
  const a = args(process.argv.slice(2));
  const rates = (a.rates ?? '0,0.05,0.2').split(',').map(Number);
  const runScale = Number(a.scale ?? 1);
  const lagMs = Number(a.lag ?? 250);
  const seed = Number(a.seed ?? 1);
  process.env.AWS_REGION = 'local';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  process.env.LOG_LEVEL ??= 'ERROR';
  process.env.BAREMETAL_INDEX_RETRIES = '0';
  process.env.BAREMETAL_ORPHAN_GRACE_S = '0';
  const ddb = await startDynamoDbLocal({ heapMb: 2048 });
  let servers: Server[] = [];
  const reports: RunReport[] = [];
  try {
    const { resetConfig } = await import('../functions/config.js');
    const { snapshot } = await import('../functions/store/placement/snapshot.js');
    const { listen } = await import('../functions/observability/counters.js');
    const { getProvider } = await import('../functions/store/placement/providers.js');
    const { recoverOrphanAllocations } = await import('../functions/maintenance/orphans.js');
    const { servePlacement, serveBaremetal } = await import('../local/apis.js');
    const { localRunner } = await import('../local/state-machines.js');
    let warmup = a.warmup !== 'false';
    for (const rate of warmup ? [0, ...rates] : rates) {
      const t0 = Date.now();
      const scale = warmup ? 0.1 : runScale;
      const table = `chaos_${randomUUID().replace(/-/g, '')}`;
      await ensureTable(ddb.endpoint, table);
      const proxy: FaultProxy = await startFaultProxy(ddb.endpoint, {
        ...NO_FAULTS,
        rates: {},
        seed: seed + Math.round(rate * 1000),
        lagMs: rate ? lagMs : 0,
      });
      process.env.TABLE_NAME = table;
      process.env.DDB_ENDPOINT = proxy.endpoint;
      resetConfig();
      snapshot().reset();
      if (!servers.length) servers = [await servePlacement(0), await serveBaremetal(0)];
      const url = (s: Server) => `http://127.0.0.1:${(s.address() as { port: number }).port}`;
      const placement = http(url(servers[0]!), 'placement');
      const baremetal = http(url(servers[1]!), 'baremetal');
      const runner = localRunner();
      const counted = listen();
      const rec = new Recorder();
      process.stdout.write(`# rate ${rate}: setting up\n`);

      // setup without faults: providers, nodes made available
      const world = await placementWorld(placement, { providers: 4, projects: 3, cap: 16 });
      const bm: BaremetalWorld = { nodes: [], resourceClass: `chaos-${randomUUID().slice(0, 8)}`, creates: [] };
      for (let i = 0; i < Math.round(10 * scale); i++) {
        const c = await baremetal.req('POST', '/v1/nodes', { driver: 'fake-hardware', resource_class: bm.resourceClass });
        const uuid = c.json.uuid as string;
        for (const target of ['manage', 'provide']) {
          await baremetal.req('PUT', `/v1/nodes/${uuid}/states/provision`, { target });
          await runner.idle();
        }
        await baremetal.req('PUT', `/v1/nodes/${uuid}/states/power`, { target: 'power off' });
        await runner.idle();
        bm.nodes.push(uuid);
      }

      process.stdout.write(`# rate ${rate}: workload\n`);
      proxy.setSpec({ rate, rates: {} });
      await Promise.all([
        claimsWorkload(placement, rec, world, { ops: Math.round(1000 * scale), workers: 16, consumersPerWorker: 4, seed }),
        freshCreates(placement, rec, { count: Math.round(150 * scale), parallel: 6 }),
        baremetalWorkload(baremetal, rec, bm, { allocations: Math.round(100 * scale), patches: Math.round(50 * scale), parallel: 8, seed }),
      ]);
      await consumerRaces(placement, rec, world, { rounds: Math.round(20 * scale), writers: 6 });
      await providerRaces(placement, rec, { rounds: Math.round(20 * scale), writers: 6 });
      await runner.idle();
      proxy.setSpec({ rate: 0, rates: {} });
      for (let i = 0; i < 3; i++) {
        await recoverOrphanAllocations({ graceMs: 0 });
        await runner.idle();
      }

      process.stdout.write(`# rate ${rate}: checking\n`);
      await checkPlacementTotals(placement, rec, world, async (rp) => (await getProvider(rp))!.allocationCount);
      const bmTotals = await checkBaremetal(baremetal, rec, bm);
      const ms = rec.answers.map((x) => x.ms);
      const okMs = rec.answers.filter((x) => x.status < 300).map((x) => x.ms);
      const r: RunReport = {
        rate,
        lagMs: proxy.spec.lagMs,
        requests: rec.answers.length,
        byStatus: byStatus(rec.answers),
        invariantsBroken: rec.violations.length,
        violations: rec.violations.slice(0, 20),
        p50: Math.round(percentile(ms, 50)),
        p99: Math.round(percentile(ms, 99)),
        ok50: Math.round(percentile(okMs, 50)),
        ok99: Math.round(percentile(okMs, 99)),
        faults: { ...proxy.stats.faults },
        ddbCalls: proxy.stats.calls,
        outcomesUnknown: counted.get('tx.unknown'),
        resolvedCommitted: counted.get('tx.resolvedCommitted'),
        resolvedNotCommitted: counted.get('tx.resolvedNotCommitted'),
        bareMetal: { ...bmTotals, nodes: bm.nodes.length },
        samples: Object.fromEntries(rec.samples),
        seconds: Math.round((Date.now() - t0) / 1000),
      };
      counted.stop();
      if (warmup && !r.invariantsBroken) {
        // the first pass only warms the process (JIT, connections): not reported unless it broke something
        warmup = false;
        await proxy.stop();
        continue;
      }
      warmup = false;
      reports.push(r);
      await proxy.stop();
      const line = JSON.stringify({ scenario: 'chaos', ...r });
      process.stdout.write(`${line}\n`);
      if (a.json) appendFileSync(a.json, `${line}\n`);
    }
  } finally {
    await closeServers(servers);
    await ddb.stop();
  }
  const base = reports.find((r) => r.rate === 0);
  const rel = (x: number, b: number | undefined, isBase: boolean) => (b && !isBase ? ` (${(x / Math.max(1, b)).toFixed(1)}×)` : '');
  process.stdout.write(
    '\n| fault rate | requests | answers by status | invariants broken | p50 / p99 ms (all) | p50 / p99 ms (2xx) | DynamoDB calls | faults injected | outcomes resolved (committed / not) |\n',
  );
  process.stdout.write('| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n');
  for (const r of reports) {
    const faults = Object.values(r.faults).reduce((x, y) => x + y, 0);
    const b = r === base;
    process.stdout.write(
      `| ${r.rate * 100} %${r.lagMs ? `, lag ${r.lagMs} ms` : ''} | ${r.requests} | ${JSON.stringify(r.byStatus)} | ${r.invariantsBroken} | ` +
        `${r.p50}${rel(r.p50, base?.p50, b)} / ${r.p99}${rel(r.p99, base?.p99, b)} | ${r.ok50}${rel(r.ok50, base?.ok50, b)} / ${r.ok99}${rel(r.ok99, base?.ok99, b)} | ` +
        `${r.ddbCalls} | ${faults} | ${r.outcomesUnknown} (${r.resolvedCommitted} / ${r.resolvedNotCommitted}) |\n`,
    );
  }
  for (const r of reports) for (const v of r.violations) process.stdout.write(`BROKEN at ${r.rate}: ${v}\n`);
  if (a.samples) for (const r of reports) for (const [k, v] of Object.entries(r.samples)) process.stdout.write(`# ${r.rate} ${k}: ${v}\n`);
  process.exit(reports.some((r) => r.invariantsBroken) ? 1 : 0);
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
