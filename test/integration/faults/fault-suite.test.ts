/**
 * The fault suite: both APIs' real handlers, with the DynamoDB fault and lag injector
 * (local/ddb-faults.ts) between them and DynamoDB Local — throttling,
 * TransactionConflict, TransactionInProgress, 500s, answers lost after the write
 * committed, latency, and an index that lags the table — at a fault rate of 20 %.
 * Concurrent claims, deletes, consumer-generation races, provider-write races, fresh
 * creates and bare-metal allocations racing for nodes run through it; then, with the
 * faults off, the invariants of ./workload.ts are checked: what every client was told
 * matches what is stored. `npm run chaos` (bench/chaos.ts) runs the same workload
 * longer, at 5 % and 20 %, and reports the figures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { inject } from 'vitest';
import { useTable } from '../harness.js';
import { activeBaremetal, availableNode, type BmApi } from '../baremetal/harness.js';
import { disagreements, scanTable } from '../baremetal/agreement.js';
import { NO_FAULTS, startFaultProxy, type FaultProxy } from '../../../local/ddb-faults.js';
import {
  baremetalWorkload,
  byStatus,
  checkBaremetal,
  checkBaremetalPlacement,
  foreignClaims,
  checkPlacementTotals,
  claimsWorkload,
  consumerRaces,
  freshCreates,
  http,
  largeChanges,
  placementWorld,
  providerRaces,
  Recorder,
  type BaremetalWorld,
  type Http,
} from './workload.js';
import { closeServers } from '../../../local/servers.js';

const RATE = 0.2;

let proxy: FaultProxy;
let servers: Server[] = [];
let placement: Http;
let baremetal: Http;
let bmApi: BmApi;

async function serveBoth(): Promise<void> {
  const { servePlacement, serveBaremetal } = await import('../../../local/apis.js');
  const { localRunner } = await import('../../../local/state-machines.js');
  const p = await servePlacement(0);
  const b = await serveBaremetal(0);
  servers = [p, b];
  const url = (s: Server) => `http://127.0.0.1:${(s.address() as { port: number }).port}`;
  placement = http(url(p), 'placement');
  baremetal = http(url(b), 'baremetal');
  const runner = localRunner();
  // the harness' helpers (availableNode) speak through a BmApi
  bmApi = {
    url: url(b),
    runner,
    async req(method, path, opts = {}) {
      const r = await baremetal.req(method, path, opts.body, opts.version ?? undefined);
      return { status: r.status, headers: new Headers(), text: r.text, json: r.json };
    },
    settle: () => runner.idle(),
    close: async () => undefined,
  };
}

async function stopServers(): Promise<void> {
  await closeServers(servers);
}

/**
 * After a bare-metal workload: let its executions finish, turn the faults off, and take
 * over (as the maintenance function would) every execution that died on a fault.
 */
async function faultsOffAndOrphansTakenOver(): Promise<void> {
  await bmApi.settle();
  proxy.setSpec({ rate: 0, rates: {} });
  const { recoverOrphanAllocations } = await import('../../../functions/maintenance/orphans.js');
  for (let i = 0; i < 3; i++) {
    await recoverOrphanAllocations({ graceMs: 0 });
    await bmApi.settle();
  }
}

/** a proxy in front of the shared DynamoDB Local, a fresh table behind it, both APIs on it */
async function setup(lagMs: number, env: Record<string, string> = {}): Promise<void> {
  await useTable({ BAREMETAL_INDEX_RETRIES: '0', BAREMETAL_ORPHAN_GRACE_S: '0', ...env });
  proxy = await startFaultProxy(inject('ddbEndpoint'), { ...NO_FAULTS, rates: {}, seed: 12, lagMs });
  process.env.DDB_ENDPOINT = proxy.endpoint;
  const { resetConfig } = await import('../../../functions/config.js');
  resetConfig();
  const { snapshot } = await import('../../../functions/store/placement/snapshot.js');
  snapshot().reset();
  await serveBoth();
}

describe(`the fault suite: both APIs at a ${RATE * 100} % DynamoDB fault rate`, () => {
  beforeAll(async () => setup(250));
  afterAll(async () => {
    await bmApi?.settle();
    await stopServers();
    await proxy?.stop();
  });

  it('Placement: every answer matches what is stored, and every derived number agrees', async () => {
    const { listen } = await import('../../../functions/observability/counters.js');
    const counted = listen();
    const { getProvider } = await import('../../../functions/store/placement/providers.js');
    const world = await placementWorld(placement, { providers: 3, projects: 3, cap: 12 });
    const rec = new Recorder();
    proxy.setSpec({ rate: RATE, rates: {} });
    await Promise.all([
      claimsWorkload(placement, rec, world, { ops: 160, workers: 12, consumersPerWorker: 3, seed: 7 }),
      freshCreates(placement, rec, { count: 45, parallel: 6 }),
    ]);
    await consumerRaces(placement, rec, world, { rounds: 8, writers: 5 });
    await providerRaces(placement, rec, { rounds: 8, writers: 5 });
    proxy.setSpec({ rate: 0, rates: {} });
    await checkPlacementTotals(placement, rec, world, async (rp) => (await getProvider(rp))!.allocationCount);
    expect(rec.violations, `answers by status ${JSON.stringify(byStatus(rec.answers))}`).toEqual([]);
    // the injector did its job: faults of every kind, and unknown outcomes the store had to resolve
    for (const [kind, n] of Object.entries(proxy.stats.faults)) expect(n, `${kind} faults injected`).toBeGreaterThan(0);
    expect(counted.get('tx.unknown'), 'write outcomes resolved').toBeGreaterThan(0);
    counted.stop();
    // the workload did something: claims were stored, races had winners
    expect(rec.answers.filter((a) => a.status === 204).length).toBeGreaterThan(40);
    for (const race of ['PUT /allocations/{c} (race)', 'PUT /resource_providers/{u}/traits (race)']) {
      expect(rec.answers.filter((a) => a.what === race && a.status < 300).length, race).toBeGreaterThan(3);
    }
  }, 600_000);

  it('bare metal: creates under conflicts answer 201 or Ironic’s error, never a 409 that hides a stored allocation; no node double-booked', async () => {
    const world: BaremetalWorld = { nodes: [], resourceClass: `chaos-${randomUUID().slice(0, 8)}`, creates: [] };
    for (let i = 0; i < 6; i++) world.nodes.push((await availableNode(bmApi, { resource_class: world.resourceClass })).uuid);
    const rec = new Recorder();
    // more of the faults that hide an outcome or cancel a transaction
    proxy.setSpec({ rate: RATE, rates: { conflict: 0.08, inprogress: 0.08 } });
    await baremetalWorkload(baremetal, rec, world, { allocations: 40, patches: 20, parallel: 8, seed: 3 });
    await faultsOffAndOrphansTakenOver();
    const { active } = await checkBaremetal(baremetal, rec, world);
    expect(rec.violations, `answers by status ${JSON.stringify(byStatus(rec.answers))}`).toEqual([]);
    expect(active).toBeGreaterThan(0);
    expect(active).toBeLessThanOrEqual(world.nodes.length);
    expect(world.creates.filter((c) => c.status === 201).length).toBeGreaterThan(world.nodes.length);
  }, 600_000);
});

/**
 * BAREMETAL_SCHEDULER=placement at the same fault rate: allocations racing for fewer
 * nodes, node writes in between, and Placement clients (as Nova would) claiming the
 * same nodes' units. Then, faults off: every answer matches what is stored, "Placement
 * usage == active bare-metal allocations", "no node holds both a foreign Placement
 * allocation and a bare-metal allocation", and the table-wide agreement of nodes,
 * providers and consumers (../baremetal/agreement.ts).
 */
describe(`the fault suite: bare metal through Placement at ${RATE * 100} % faults`, () => {
  beforeAll(async () => {
    await setup(250, { BAREMETAL_SCHEDULER: 'placement' });
    const { forgetSchedulerState, migrateNodesToPlacement } = await import('../../../functions/bridge/migration.js');
    forgetSchedulerState();
    await migrateNodesToPlacement({ deadline: Number.POSITIVE_INFINITY });
    // the shared check after each test reads this table too
    activeBaremetal.table = process.env.TABLE_NAME;
    activeBaremetal.api = bmApi;
  });
  afterAll(async () => {
    await bmApi?.settle();
    activeBaremetal.table = undefined;
    activeBaremetal.api = undefined;
    await stopServers();
    await proxy?.stop();
  });

  it('allocations and Placement claims racing for nodes: exactly one holds each node, usage == active allocations', async () => {
    const world: BaremetalWorld = { nodes: [], resourceClass: `chaos-pl-${randomUUID().slice(0, 8)}`, creates: [] };
    const placementClass = `CUSTOM_${world.resourceClass.replace(/[^0-9A-Za-z]+/g, '_').toUpperCase()}`;
    for (let i = 0; i < 8; i++) world.nodes.push((await availableNode(bmApi, { resource_class: world.resourceClass })).uuid);
    const rec = new Recorder();
    proxy.setSpec({ rate: RATE, rates: { conflict: 0.08, inprogress: 0.08 } });
    const [, foreign] = await Promise.all([
      baremetalWorkload(baremetal, rec, world, { allocations: 30, patches: 16, parallel: 6, seed: 5 }),
      foreignClaims(placement, rec, world, placementClass, { claims: 12, parallel: 3, seed: 9 }),
    ]);
    await faultsOffAndOrphansTakenOver();
    const { active } = await checkBaremetal(baremetal, rec, world);
    const { config } = await import('../../../functions/config.js');
    const { foreignHeld } = await checkBaremetalPlacement(
      baremetal,
      placement,
      rec,
      world,
      foreign,
      placementClass,
      config().incompleteConsumerProjectId,
    );
    expect(rec.violations, `answers by status ${JSON.stringify(byStatus(rec.answers))}`).toEqual([]);
    expect(disagreements(await scanTable(inject('ddbEndpoint'), process.env.TABLE_NAME!), 'placement')).toEqual([]);
    // both sides won some nodes, and never more than there are
    expect(active).toBeGreaterThan(0);
    expect(foreignHeld).toBeGreaterThan(0);
    expect(active + foreignHeld).toBeLessThanOrEqual(world.nodes.length);
  }, 600_000);
});

/**
 * Changes larger than one transaction (functions/store/ddb/intents/) at the same fault
 * rate: a reshape of 120 instances and 150 new aggregates, each stored whole or not at
 * all; then the maintenance function finishes or undoes whatever a failed writer left
 * (its lease is short here), and nothing stays locked.
 */
describe(`the fault suite: changes larger than one transaction at ${RATE * 100} % faults`, () => {
  beforeAll(async () => setup(250, { INTENT_LEASE_MS: '2000' }));
  afterAll(async () => {
    await stopServers();
    await proxy?.stop();
  });

  it('a large reshape and a large aggregate change: stored whole or not at all, counters == rows == /usages', async () => {
    const rec = new Recorder();
    const run = await largeChanges(placement, rec, {
      instances: 120,
      aggregates: 150,
      faults: (on) => proxy.setSpec({ rate: on ? RATE : 0, rates: {} }),
    });
    // a writer that failed mid-way left its change to the maintenance function
    await new Promise((r) => setTimeout(r, 2_500));
    const { recoverIntents } = await import('../../../functions/store/ddb/intents/recovery.js');
    await recoverIntents();
    await run.check();
    expect(rec.violations, `answers by status ${JSON.stringify(byStatus(rec.answers))}`).toEqual([]);
    expect(await recoverIntents()).toEqual({ open: 0, recovered: 0 });
  }, 600_000);
});

/**
 * Index lag longer than the change log's overlap window (3 s, OVERLAP_MS): a cold process (a new
 * Lambda container) loads the providers through gsi1, which does not show the last
 * 12 s of writes, yet lists and candidates show every write acknowledged before the
 * request — the snapshot replays the change log from before the load with consistent
 * reads (store/placement/snapshot-load.ts loadIndex). The same holds for the periodic
 * full resync.
 */
describe('index lag: provider lists and candidates stay read-your-writes', () => {
  const LAG = 12_000;
  const PAST_OVERLAP = 6_000;
  beforeAll(async () => setup(LAG));
  afterAll(async () => {
    await stopServers();
    await proxy?.stop();
  });

  const names = async (q: string) =>
    ((await placement.req('GET', `/resource_providers${q}`)).json.resource_providers as Array<{ name: string }>).map((p) => p.name).sort();
  const candidates = async (q: string) =>
    Object.keys((await placement.req('GET', `/allocation_candidates?${q}`)).json.provider_summaries ?? {}).sort();
  const coldStart = async () => (await import('../../../functions/store/placement/snapshot.js')).snapshot().reset();
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('after a cold start and after a full resync', async () => {
    const { scanAllProviders } = await import('../../../functions/store/placement/providers.js');
    const tag = randomUUID().slice(0, 8);
    const a = randomUUID();
    const b = randomUUID();
    for (const [uuid, vcpu] of [
      [a, 8],
      [b, 8],
    ] as const) {
      expect((await placement.req('POST', '/resource_providers', { name: `lag-${tag}-${uuid}`, uuid })).status).toBe(200);
      const inv = await placement.req('PUT', `/resource_providers/${uuid}/inventories`, {
        resource_provider_generation: 0,
        inventories: { VCPU: { total: vcpu } },
      });
      expect(inv.status).toBe(200);
    }
    await sleep(PAST_OVERLAP);
    // the injector lags: the index does not show the last write yet
    const indexed = (await scanAllProviders()).map((p) => p.record.uuid);
    expect(indexed).not.toContain(b);
    await coldStart();
    expect(await names(`?name=lag-${tag}-${a}`)).toEqual([`lag-${tag}-${a}`]);
    expect(await candidates('resources=VCPU:6')).toEqual([a, b].sort());

    // an inventory shrinks, a provider goes away, a new one comes: a cold start sees all three
    const g = (await placement.req('GET', `/resource_providers/${a}/inventories`)).json.resource_provider_generation;
    expect(
      (await placement.req('PUT', `/resource_providers/${a}/inventories`, { resource_provider_generation: g, inventories: { VCPU: { total: 2 } } }))
        .status,
    ).toBe(200);
    expect((await placement.req('DELETE', `/resource_providers/${b}`)).status).toBe(204);
    const c = randomUUID();
    expect((await placement.req('POST', '/resource_providers', { name: `lag-${tag}-${c}`, uuid: c })).status).toBe(200);
    await sleep(PAST_OVERLAP);
    await coldStart();
    expect(await candidates('resources=VCPU:6')).toEqual([]);
    expect(await candidates('resources=VCPU:2')).toEqual([a]);
    expect((await names('')).filter((n) => n.startsWith(`lag-${tag}`))).toEqual([`lag-${tag}-${a}`, `lag-${tag}-${c}`].sort());

    // a warm snapshot that saw a write, then a full resync through the lagging index
    // (which still shows the provider before the write) must not go back in time
    const g2 = (await placement.req('GET', `/resource_providers/${a}/inventories`)).json.resource_provider_generation;
    expect(
      (await placement.req('PUT', `/resource_providers/${a}/inventories`, { resource_provider_generation: g2, inventories: { VCPU: { total: 16 } } }))
        .status,
    ).toBe(200);
    expect(await candidates('resources=VCPU:12')).toEqual([a]);
    await sleep(PAST_OVERLAP);
    expect(await candidates('resources=VCPU:12')).toEqual([a]);
    process.env.SNAPSHOT_RESYNC_S = '1';
    (await import('../../../functions/config.js')).resetConfig();
    try {
      const s = (await import('../../../functions/store/placement/snapshot.js')).snapshot();
      const resyncs = s.stats.resyncs;
      expect(await candidates('resources=VCPU:12')).toEqual([a]);
      expect(s.stats.resyncs).toBe(resyncs + 1);
    } finally {
      delete process.env.SNAPSHOT_RESYNC_S;
      (await import('../../../functions/config.js')).resetConfig();
    }
    expect(proxy.lag!.stats.hidden).toBeGreaterThan(0);
  }, 120_000);
});
