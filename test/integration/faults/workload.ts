/**
 * The fault suite's workload and its invariants, shared by the bounded run in
 * `npm test` (fault-suite.test.ts) and the long one (`npm run chaos`, bench/chaos.ts).
 * Plain TypeScript over HTTP (no test framework): every check returns the violations
 * it found, as sentences.
 *
 * What is checked (issue 12): no over-commit; provider usage == allocation rows ==
 * consumer records == GET /usages; every 2xx stored; every 4xx changed nothing; every
 * 5xx either stored consistently or changed nothing; no bare-metal node double-booked;
 * every allocation ends active or error. Ground truth comes from each client's own
 * history: a consumer (or provider, or allocation) is written by one worker at a time,
 * so after every answer the set of states it may be in is known — {target} after a
 * 2xx, unchanged after a 4xx, either after a 5xx — and every later read must find one
 * of them.
 */
import { randomUUID } from 'node:crypto';
import { pct, pool } from '../../../bench/kit.js';
import { mulberry32 } from '../../../local/prng.js';

export interface Res {
  status: number;
  text: string;
  json: any;
  ms: number;
}

export interface Http {
  url: string;
  kind: 'placement' | 'baremetal';
  req(method: string, path: string, body?: unknown, version?: string): Promise<Res>;
}

/** every answer of the run: which API, what, status, latency */
export interface Answer {
  api: 'placement' | 'baremetal';
  what: string;
  status: number;
  ms: number;
}

/** words of DynamoDB, the SDK or a stack trace that must not reach a client */
const LEAK =
  /socket hang up|ECONNRESET|Throttling|throughput|TransactionInProgress|TransactionCanceled|InternalServerError|ConditionalCheckFailed|OutcomeUnknown|@aws-sdk|node_modules|\.ts:\d+/i;

export class Recorder {
  readonly answers: Answer[] = [];
  readonly violations: string[] = [];
  /** the first body of each (request, status) that was not a 2xx */
  readonly samples = new Map<string, string>();
  add(api: Answer['api'], what: string, r: Res): Res {
    this.answers.push({ api, what, status: r.status, ms: r.ms });
    if (r.status >= 300 && !this.samples.has(`${what} ${r.status}`)) this.samples.set(`${what} ${r.status}`, r.text.slice(0, 300));
    // a 5xx carries a generic text and the request id; DynamoDB's or the SDK's words stay in the log
    if (r.status >= 500 && LEAK.test(r.text)) this.violate(`${what} answered ${r.status} with internal detail: ${r.text.slice(0, 200)}`);
    return r;
  }
  violate(text: string): void {
    this.violations.push(text);
  }
}

export function http(url: string, kind: Http['kind']): Http {
  return {
    url,
    kind,
    async req(method, path, body, version) {
      const headers: Record<string, string> =
        kind === 'placement'
          ? { 'x-auth-token': 'admin', accept: 'application/json', 'openstack-api-version': `placement ${version ?? '1.39'}` }
          : { 'x-openstack-ironic-api-version': version ?? '1.80' };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const t0 = performance.now();
      const r = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await r.text();
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      return { status: r.status, text, json, ms: performance.now() - t0 };
    },
  };
}

/** A seeded generator (the workload is reproducible; the interleaving is not). */
export function rng(seed: number): (n: number) => number {
  const next = mulberry32(seed);
  return (n: number) => Math.floor(next() * n);
}

/** a read that must eventually answer (faults may fail a few): retried on 5xx */
export async function read(h: Http, path: string, version?: string, tries = 20): Promise<Res> {
  let r: Res | undefined;
  for (let i = 0; i < tries; i++) {
    r = await h.req('GET', path, undefined, version);
    if (r.status < 500) return r;
    await new Promise((res) => setTimeout(res, 20 * (i + 1)));
  }
  throw new Error(`GET ${path} kept failing: ${r?.status} ${r?.text}`);
}

const isOk = (s: number) => s >= 200 && s < 300;
const is4xx = (s: number) => s >= 400 && s < 500;
const is5xx = (s: number) => s >= 500;

/** the next possible states after an answer to a write whose target is `target` */
function after<S>(possible: S[], target: S, status: number, same: (a: S, b: S) => boolean): S[] {
  if (isOk(status)) return [target];
  if (is4xx(status)) return possible;
  return [...possible.filter((p) => !same(p, target)), target];
}

// ------------------------------------------------------------------ Placement

export type Allocs = Record<string, Record<string, number>>;

export interface PlacementWorld {
  /** providers the claims use, with their capacity per class */
  providers: Array<{ uuid: string; caps: Record<string, number> }>;
  projects: string[];
  /** every consumer the workload touched */
  consumers: Set<string>;
}

const canon = (a: Allocs): string =>
  JSON.stringify(
    Object.keys(a)
      .sort()
      .map((rp) => [
        rp,
        Object.keys(a[rp]!)
          .sort()
          .map((rc) => [rc, a[rp]![rc]]),
      ]),
  );

function allocsOf(body: { allocations?: Record<string, { resources: Record<string, number> }> }): Allocs {
  return Object.fromEntries(Object.entries(body.allocations ?? {}).map(([rp, v]) => [rp, v.resources]));
}

/** providers for the claims (created without faults: the setup is not under test) */
export async function placementWorld(h: Http, opts: { providers: number; projects: number; cap?: number }): Promise<PlacementWorld> {
  const providers: PlacementWorld['providers'] = [];
  for (let i = 0; i < opts.providers; i++) {
    const uuid = randomUUID();
    const caps = { VCPU: opts.cap ?? 24, MEMORY_MB: (opts.cap ?? 24) * 256 };
    const c = await h.req('POST', '/resource_providers', { name: `chaos-${uuid}`, uuid });
    if (c.status !== 200) throw new Error(`provider create: ${c.status} ${c.text}`);
    const inv = await h.req('PUT', `/resource_providers/${uuid}/inventories`, {
      resource_provider_generation: 0,
      inventories: { VCPU: { total: caps.VCPU }, MEMORY_MB: { total: caps.MEMORY_MB } },
    });
    if (inv.status !== 200) throw new Error(`inventory: ${inv.status} ${inv.text}`);
    providers.push({ uuid, caps });
  }
  return { providers, projects: Array.from({ length: opts.projects }, () => `chaos-p-${randomUUID()}`), consumers: new Set() };
}

/**
 * Claims, moves and deletes: `workers` clients, each owning its consumers and writing
 * them one request at a time (GET, then PUT / DELETE with the generation read), so the
 * possible states of every consumer are known after every answer and checked by the
 * next read. Over-commit is refused by capacity (409s are expected: the providers are
 * small on purpose).
 */
export async function claimsWorkload(
  h: Http,
  rec: Recorder,
  world: PlacementWorld,
  opts: { ops: number; workers: number; consumersPerWorker: number; seed: number },
): Promise<void> {
  await pool(opts.workers, opts.workers, async (w) => {
    const rnd = rng(opts.seed * 1000 + w);
    const mine = Array.from({ length: opts.consumersPerWorker }, () => ({
      uuid: randomUUID(),
      project: world.projects[rnd(world.projects.length)]!,
      user: `u${rnd(3)}`,
      possible: [{}] as Allocs[],
    }));
    for (const c of mine) world.consumers.add(c.uuid);
    const perWorker = Math.ceil(opts.ops / opts.workers);
    for (let i = 0; i < perWorker; i++) {
      const c = mine[rnd(mine.length)]!;
      const cur = await read(h, `/allocations/${c.uuid}`, '1.38');
      const seen = allocsOf(cur.json);
      if (!c.possible.some((p) => canon(p) === canon(seen))) {
        rec.violate(`consumer ${c.uuid}: read ${canon(seen)}, but its answers allow only ${c.possible.map(canon).join(' or ')}`);
      }
      c.possible = [seen];
      const gen = cur.json.consumer_generation ?? null;
      const op = rnd(10);
      let target: Allocs = {};
      let r: Res;
      if (op === 0 && Object.keys(seen).length) {
        r = rec.add('placement', 'DELETE /allocations/{c}', await h.req('DELETE', `/allocations/${c.uuid}`, undefined, '1.38'));
      } else {
        const n = 1 + rnd(2);
        for (let k = 0; k < n; k++) {
          const rp = world.providers[rnd(world.providers.length)]!.uuid;
          target[rp] = { VCPU: 1 + rnd(3), ...(rnd(2) ? { MEMORY_MB: 64 * (1 + rnd(4)) } : {}) };
        }
        if (op === 1) target = {};
        const body = {
          allocations: Object.fromEntries(Object.entries(target).map(([rp, resources]) => [rp, { resources }])),
          project_id: c.project,
          user_id: c.user,
          consumer_generation: gen,
          consumer_type: 'INSTANCE',
        };
        r = rec.add('placement', 'PUT /allocations/{c}', await h.req('PUT', `/allocations/${c.uuid}`, body, '1.38'));
      }
      if (!isOk(r.status) && !is4xx(r.status) && !is5xx(r.status)) rec.violate(`consumer ${c.uuid}: unexpected status ${r.status}`);
      c.possible = after(c.possible, target, r.status, (a, b) => canon(a) === canon(b));
    }
    // the final state must be one the answers allow
    for (const c of mine) {
      const cur = await read(h, `/allocations/${c.uuid}`, '1.38');
      const seen = allocsOf(cur.json);
      if (!c.possible.some((p) => canon(p) === canon(seen))) {
        rec.violate(`consumer ${c.uuid}: ends as ${canon(seen)}, but its answers allow only ${c.possible.map(canon).join(' or ')}`);
      }
    }
  });
}

/**
 * Consumer-generation races: rounds of `writers` concurrent PUTs of one consumer with
 * the generation just read, each with a different amount. At most one wins; the
 * generation moves by exactly the number of writes stored (never a 409 whose write was
 * stored, never a round with no 2xx but a new generation unless a 5xx stored it).
 */
export async function consumerRaces(h: Http, rec: Recorder, world: PlacementWorld, opts: { rounds: number; writers: number }): Promise<void> {
  const rp = world.providers[0]!.uuid;
  const c = randomUUID();
  world.consumers.add(c);
  const project = world.projects[0]!;
  for (let round = 0; round < opts.rounds; round++) {
    const cur = await read(h, `/allocations/${c}`, '1.38');
    const g = cur.json.consumer_generation ?? null;
    const before = allocsOf(cur.json);
    const rs = await Promise.all(
      Array.from({ length: opts.writers }, (_, i) =>
        h
          .req(
            'PUT',
            `/allocations/${c}`,
            {
              allocations: { [rp]: { resources: { MEMORY_MB: 8 * (round * opts.writers + i + 1) } } },
              project_id: project,
              user_id: 'u',
              consumer_generation: g,
              consumer_type: 'INSTANCE',
            },
            '1.38',
          )
          .then((r) => rec.add('placement', 'PUT /allocations/{c} (race)', r)),
      ),
    );
    const now = await read(h, `/allocations/${c}`, '1.38');
    const g2 = now.json.consumer_generation ?? null;
    const amount = now.json.allocations?.[rp]?.resources?.MEMORY_MB as number | undefined;
    const stored = amount === undefined ? -1 : amount / 8 - round * opts.writers - 1;
    const ok = rs.map((r, i) => [r.status, i] as const).filter(([s]) => isOk(s));
    const where = `consumer race round ${round} (statuses ${rs.map((r) => r.status).join(',')})`;
    if (ok.length > 1) rec.violate(`${where}: ${ok.length} writers with the same generation succeeded`);
    const moved = (g2 ?? 0) - (g ?? 0);
    if (ok.length === 1) {
      if (stored !== ok[0]![1]) rec.violate(`${where}: writer ${ok[0]![1]} was answered 2xx but writer ${stored}'s amount is stored`);
      if (moved !== 1) rec.violate(`${where}: one write succeeded but the generation moved by ${moved}`);
    } else if (moved === 0) {
      if (canon(allocsOf(now.json)) !== canon(before))
        rec.violate(`${where}: nothing succeeded and the generation did not move, yet the allocations changed`);
    } else if (moved === 1) {
      // stored by a writer that was answered 5xx: that is allowed; by a 4xx: not
      if (stored < 0 || stored >= rs.length || !is5xx(rs[stored]!.status)) {
        rec.violate(`${where}: no 2xx, but the generation moved and writer ${stored}'s write (answered ${rs[stored]?.status}) is stored`);
      }
    } else rec.violate(`${where}: the generation moved by ${moved}`);
  }
}

/**
 * Provider writes racing on one generation: rounds of `writers` concurrent PUTs of a
 * provider's traits (each a different set) with the generation just read, as races above.
 */
export async function providerRaces(h: Http, rec: Recorder, opts: { rounds: number; writers: number }): Promise<void> {
  const uuid = randomUUID();
  const c = await h.req('POST', '/resource_providers', { name: `race-${uuid}`, uuid });
  if (c.status !== 200) throw new Error(`provider create: ${c.status} ${c.text}`);
  const pool = [
    'HW_CPU_X86_AVX',
    'HW_CPU_X86_AVX2',
    'HW_CPU_X86_SSE',
    'HW_CPU_X86_SSE2',
    'HW_CPU_X86_SSE3',
    'HW_CPU_X86_SSSE3',
    'HW_CPU_X86_SSE41',
    'HW_CPU_X86_SSE42',
  ];
  const setFor = (round: number, i: number) =>
    [pool[(round + i) % pool.length]!, pool[(round + 2 * i + 1) % pool.length]!, `CUSTOM_CHAOS_${round}_${i}`].sort();
  for (let round = 0; round < opts.rounds; round++) {
    for (let i = 0; i < opts.writers; i++) {
      const t = await h.req('PUT', `/traits/CUSTOM_CHAOS_${round}_${i}`);
      if (t.status >= 500) await h.req('PUT', `/traits/CUSTOM_CHAOS_${round}_${i}`);
    }
    const cur = await read(h, `/resource_providers/${uuid}/traits`);
    const g = cur.json.resource_provider_generation as number;
    const rs = await Promise.all(
      Array.from({ length: opts.writers }, (_, i) =>
        h
          .req('PUT', `/resource_providers/${uuid}/traits`, { resource_provider_generation: g, traits: setFor(round, i) })
          .then((r) => rec.add('placement', 'PUT /resource_providers/{u}/traits (race)', r)),
      ),
    );
    const now = await read(h, `/resource_providers/${uuid}/traits`);
    const g2 = now.json.resource_provider_generation as number;
    const traits = JSON.stringify([...(now.json.traits as string[])].sort());
    const stored = Array.from({ length: opts.writers }, (_, i) => JSON.stringify(setFor(round, i))).indexOf(traits);
    const ok = rs.map((r, i) => [r.status, i] as const).filter(([s]) => isOk(s));
    const where = `provider race round ${round} (statuses ${rs.map((r) => r.status).join(',')})`;
    if (ok.length > 1) rec.violate(`${where}: ${ok.length} writers with generation ${g} succeeded`);
    if (ok.length === 1) {
      if (stored !== ok[0]![1]) rec.violate(`${where}: writer ${ok[0]![1]} was answered 2xx but writer ${stored}'s traits are stored`);
      if (g2 !== g + 1) rec.violate(`${where}: one write succeeded but the generation moved from ${g} to ${g2}`);
    } else if (g2 === g + 1) {
      if (stored < 0 || !is5xx(rs[stored]!.status)) {
        rec.violate(`${where}: no 2xx, but the generation moved and writer ${stored}'s traits (answered ${rs[stored]?.status}) are stored`);
      }
    } else if (g2 !== g) rec.violate(`${where}: the generation moved from ${g} to ${g2}`);
  }
}

/**
 * Changes larger than one transaction (the intent protocol) under faults: a compute host's
 * reshape of `instances` consumers to a child provider and a provider's `aggregates` new
 * aggregates, each written by one client that retries after a 5xx or a lost race (as a
 * client would) — then, faults off, each is stored whole or not at all: every consumer
 * moved or none, usage == the consumers' allocations == GET /usages, the aggregate list
 * the old one or the new one, never a mix; a 2xx means stored, a 4xx nothing (unless an
 * earlier 5xx had stored it).
 */
export async function largeChanges(
  h: Http,
  rec: Recorder,
  opts: { instances: number; aggregates: number; faults: (on: boolean) => void },
): Promise<{ check: () => Promise<void> }> {
  const project = `large-${randomUUID()}`;
  const owner = { project_id: project, user_id: 'u', consumer_type: 'INSTANCE' };
  // the world, faults off
  const root = randomUUID();
  const child = randomUUID();
  const agg = randomUUID();
  const ok = (r: Res, what: string) => {
    if (!isOk(r.status)) throw new Error(`${what}: ${r.status} ${r.text}`);
    return r;
  };
  ok(await h.req('POST', '/resource_providers', { name: `large-${root}`, uuid: root }, '1.38'), 'root');
  ok(
    await h.req('PUT', `/resource_providers/${root}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 1000 } } }),
    'inventory',
  );
  const consumers = Array.from({ length: opts.instances }, () => randomUUID());
  for (let i = 0; i < consumers.length; i += 50) {
    const body = Object.fromEntries(
      consumers.slice(i, i + 50).map((c) => [c, { allocations: { [root]: { resources: { VCPU: 1 } } }, ...owner, consumer_generation: null }]),
    );
    ok(await h.req('POST', '/allocations', body, '1.38'), 'consumers');
  }
  ok(await h.req('POST', '/resource_providers', { name: `large-${child}`, uuid: child, parent_provider_uuid: root }, '1.38'), 'child');
  ok(await h.req('POST', '/resource_providers', { name: `large-${agg}`, uuid: agg }, '1.38'), 'aggregate provider');
  const rootGen = (await read(h, `/resource_providers/${root}`, '1.38')).json.generation as number;
  const oldAggs = [randomUUID()];
  ok(await h.req('PUT', `/resource_providers/${agg}/aggregates`, { aggregates: oldAggs, resource_provider_generation: 0 }, '1.19'), 'aggregates');
  const newAggs = Array.from({ length: opts.aggregates }, () => randomUUID());
  opts.faults(true);
  const reshape = {
    inventories: {
      [root]: { resource_provider_generation: rootGen, inventories: {} },
      [child]: { resource_provider_generation: 0, inventories: { VCPU: { total: 1000 } } },
    },
    allocations: Object.fromEntries(
      consumers.map((c) => [c, { allocations: { [child]: { resources: { VCPU: 1 } } }, ...owner, consumer_generation: 1 }]),
    ),
  };
  // sent again after a 5xx, as a client would; a 2xx or a 4xx ends it
  const untilStored = async (send: () => Promise<Res>, what: string) => {
    const answers: Res[] = [];
    for (let i = 0; i < 6; i++) {
      const r = rec.add('placement', what, await send());
      answers.push(r);
      if (r.status < 500) break;
    }
    return answers;
  };
  const [reshaped, aggregated] = await Promise.all([
    untilStored(() => h.req('POST', '/reshaper', reshape, '1.38'), 'POST /reshaper (large)'),
    untilStored(
      () => h.req('PUT', `/resource_providers/${agg}/aggregates`, { aggregates: newAggs, resource_provider_generation: 1 }, '1.19'),
      'PUT /resource_providers/{u}/aggregates (large)',
    ),
  ]);
  opts.faults(false);
  return {
    check: async () => {
      // the reshape: every consumer moved or none
      const moved = await pool(consumers.length, 8, async (i) => {
        const a = (await read(h, `/allocations/${consumers[i]}`, '1.38')).json.allocations as Record<string, unknown>;
        return a[child] ? 1 : a[root] ? 0 : -1;
      });
      const n = moved.filter((m) => m === 1).length;
      const where = `reshape (answers ${reshaped.map((r) => r.status).join(',')})`;
      if (moved.includes(-1)) rec.violate(`${where}: a consumer lost its allocations`);
      if (n !== 0 && n !== consumers.length) rec.violate(`${where}: half applied, ${n} of ${consumers.length} consumers moved`);
      if (reshaped.some((r) => isOk(r.status)) && n !== consumers.length) rec.violate(`${where}: answered 2xx, not stored`);
      if (!reshaped.some((r) => isOk(r.status) || is5xx(r.status)) && n !== 0) rec.violate(`${where}: only 4xx answers, yet stored`);
      const ru = (await read(h, `/resource_providers/${root}/usages`)).json.usages as Record<string, number>;
      const cu = (await read(h, `/resource_providers/${child}/usages`)).json.usages as Record<string, number>;
      if ((ru.VCPU ?? 0) !== (n ? 0 : consumers.length) || (cu.VCPU ?? 0) !== (n ? consumers.length : 0)) {
        rec.violate(`${where}: usage root ${ru.VCPU} child ${cu.VCPU}, consumers moved ${n}`);
      }
      const u = (await read(h, `/usages?project_id=${project}`, '1.38')).json.usages;
      if (u.INSTANCE?.VCPU !== consumers.length || u.INSTANCE?.consumer_count !== consumers.length) {
        rec.violate(`${where}: GET /usages ${JSON.stringify(u)}, ${consumers.length} consumers of 1 VCPU`);
      }
      // the aggregates: the old list or the new one
      const got = (await read(h, `/resource_providers/${agg}/aggregates`, '1.19')).json.aggregates as string[];
      const aw = `aggregates (answers ${aggregated.map((r) => r.status).join(',')})`;
      const isNew = JSON.stringify(got) === JSON.stringify(newAggs);
      const isOld = JSON.stringify(got) === JSON.stringify(oldAggs);
      if (!isNew && !isOld) rec.violate(`${aw}: ${got.length} aggregates stored, neither the old list nor the new one`);
      if (aggregated.some((r) => isOk(r.status)) && !isNew) rec.violate(`${aw}: answered 2xx, not stored`);
      if (!aggregated.some((r) => isOk(r.status) || is5xx(r.status)) && isNew) rec.violate(`${aw}: only 4xx answers, yet stored`);
    },
  };
}

/**
 * Creates of fresh names and UUIDs (providers, custom traits, custom resource
 * classes): 2xx must be stored, with "created" (never "it was already there" for a
 * name nobody used); a 4xx must have stored nothing.
 */
export async function freshCreates(h: Http, rec: Recorder, opts: { count: number; parallel: number }): Promise<void> {
  await pool(opts.count, opts.parallel, async (i) => {
    const kind = i % 3;
    const id = randomUUID();
    if (kind === 0) {
      const r = rec.add('placement', 'POST /resource_providers', await h.req('POST', '/resource_providers', { name: `fresh-${id}`, uuid: id }));
      const there = (await read(h, `/resource_providers/${id}`)).status === 200;
      if (isOk(r.status) && !there) rec.violate(`provider ${id}: created (${r.status}) but not stored`);
      if (is4xx(r.status) && there) rec.violate(`provider ${id}: answered ${r.status} (${r.text.slice(0, 120)}) but stored`);
    } else if (kind === 1) {
      const name = `CUSTOM_FRESH_${id.replace(/-/g, '_').toUpperCase()}`;
      const r = rec.add('placement', 'PUT /traits/{name}', await h.req('PUT', `/traits/${name}`));
      const there = (await read(h, `/traits/${name}`)).status === 204;
      if (r.status === 204) rec.violate(`trait ${name}: nobody had created it, yet PUT answered 204 (already existed)`);
      if (isOk(r.status) && !there) rec.violate(`trait ${name}: created (${r.status}) but not stored`);
      if (is4xx(r.status) && there) rec.violate(`trait ${name}: answered ${r.status} but stored`);
    } else {
      const name = `CUSTOM_FRESH_${id.replace(/-/g, '_').toUpperCase()}`;
      const r = rec.add('placement', 'POST /resource_classes', await h.req('POST', '/resource_classes', { name }));
      const there = (await read(h, `/resource_classes/${name}`)).status === 200;
      if (isOk(r.status) && !there) rec.violate(`resource class ${name}: created (${r.status}) but not stored`);
      if (is4xx(r.status) && there) rec.violate(`resource class ${name}: answered ${r.status} (${r.text.slice(0, 120)}) but stored`);
    }
  });
}

/**
 * The derived numbers agree: per provider, usage == the sum of the consumers'
 * allocations == its allocation rows, within capacity, `allocs` == the number of
 * consumers holding; per project, GET /usages == the sum of its consumers.
 */
export async function checkPlacementTotals(
  h: Http,
  rec: Recorder,
  world: PlacementWorld,
  allocationCount: (rp: string) => Promise<number>,
): Promise<void> {
  const records = new Map<string, { project: string; type: string; allocs: Allocs; gen: number }>();
  await pool([...world.consumers].length, 8, async (i) => {
    const c = [...world.consumers][i]!;
    const r = await read(h, `/allocations/${c}`, '1.38');
    if (Object.keys(r.json.allocations ?? {}).length) {
      records.set(c, { project: r.json.project_id, type: r.json.consumer_type, allocs: allocsOf(r.json), gen: r.json.consumer_generation });
    }
  });
  for (const p of world.providers) {
    const sum: Record<string, number> = {};
    let holders = 0;
    for (const [, r] of records) {
      const res = r.allocs[p.uuid];
      if (!res) continue;
      holders++;
      for (const [rc, n] of Object.entries(res)) sum[rc] = (sum[rc] ?? 0) + n;
    }
    const used = (await read(h, `/resource_providers/${p.uuid}/usages`)).json.usages as Record<string, number>;
    for (const rc of Object.keys(p.caps)) {
      if ((used[rc] ?? 0) !== (sum[rc] ?? 0)) rec.violate(`provider ${p.uuid}: usage ${rc}=${used[rc]} but its consumers hold ${sum[rc] ?? 0}`);
      if ((used[rc] ?? 0) > p.caps[rc]!) rec.violate(`provider ${p.uuid}: over-committed, ${rc} ${used[rc]} > capacity ${p.caps[rc]}`);
    }
    const rows = (await read(h, `/resource_providers/${p.uuid}/allocations`, '1.38')).json.allocations as Record<
      string,
      { resources: Record<string, number>; consumer_generation: number }
    >;
    const holdersIds = [...records].filter(([, r]) => r.allocs[p.uuid]).map(([c]) => c);
    if (JSON.stringify(Object.keys(rows).sort()) !== JSON.stringify(holdersIds.sort())) {
      rec.violate(`provider ${p.uuid}: allocation rows name ${Object.keys(rows).length} consumers, the consumer records ${holdersIds.length}`);
    }
    for (const [c, row] of Object.entries(rows)) {
      const r = records.get(c);
      if (r && (canon({ x: row.resources }) !== canon({ x: r.allocs[p.uuid]! }) || row.consumer_generation !== r.gen)) {
        rec.violate(`provider ${p.uuid}: the row of consumer ${c} disagrees with its record`);
      }
    }
    const count = await allocationCount(p.uuid);
    if (count !== holders) rec.violate(`provider ${p.uuid}: allocation count ${count}, consumers holding ${holders}`);
  }
  for (const project of world.projects) {
    const expected: Record<string, Record<string, number>> = {};
    for (const [, r] of records) {
      if (r.project !== project) continue;
      const t = (expected[r.type] ??= { consumer_count: 0 });
      t.consumer_count!++;
      for (const res of Object.values(r.allocs)) for (const [rc, n] of Object.entries(res)) t[rc] = (t[rc] ?? 0) + n;
    }
    const got = (await read(h, `/usages?project_id=${project}`, '1.38')).json.usages;
    if (JSON.stringify(sortDeep(got)) !== JSON.stringify(sortDeep(expected))) {
      rec.violate(`project ${project}: GET /usages ${JSON.stringify(got)} but its consumers hold ${JSON.stringify(expected)}`);
    }
  }
}

function sortDeep(v: unknown): unknown {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
  return Object.fromEntries(
    Object.keys(v as object)
      .sort()
      .map((k) => [k, sortDeep((v as Record<string, unknown>)[k])]),
  );
}

// ------------------------------------------------------------------ bare metal

export interface BaremetalWorld {
  nodes: string[];
  resourceClass: string;
  /** POST /v1/allocations: the UUID each request asked for and its answer */
  creates: Array<{ uuid: string; status: number; text: string }>;
}

/**
 * Allocations racing for fewer nodes, with node writes (PATCH extra) in between: every
 * POST names its UUID (half also a name), so whatever was answered can be looked up.
 */
export async function baremetalWorkload(
  bm: Http,
  rec: Recorder,
  world: BaremetalWorld,
  opts: { allocations: number; patches: number; parallel: number; seed: number },
): Promise<void> {
  const rnd = rng(opts.seed);
  const jobs = [...Array.from({ length: opts.allocations }, () => 'alloc'), ...Array.from({ length: opts.patches }, () => 'patch')];
  for (let i = jobs.length - 1; i > 0; i--) {
    const j = rnd(i + 1);
    [jobs[i], jobs[j]] = [jobs[j]!, jobs[i]!];
  }
  await pool(jobs.length, opts.parallel, async (i) => {
    if (jobs[i] === 'alloc') {
      const uuid = randomUUID();
      const body = { uuid, resource_class: world.resourceClass, ...(i % 2 ? { name: `chaos-${uuid}` } : {}) };
      const r = rec.add('baremetal', 'POST /v1/allocations', await bm.req('POST', '/v1/allocations', body));
      world.creates.push({ uuid, status: r.status, text: r.text });
    } else {
      const node = world.nodes[rnd(world.nodes.length)]!;
      rec.add(
        'baremetal',
        'PATCH /v1/nodes/{n}',
        await bm.req('PATCH', `/v1/nodes/${node}`, [{ op: 'add', path: '/extra/chaos', value: String(i) }]),
      );
    }
  });
}

/** every create's answer matches what is stored; allocations end active or error; no node double-booked */
export async function checkBaremetal(bm: Http, rec: Recorder, world: BaremetalWorld): Promise<{ active: number; error: number }> {
  let active = 0;
  let error = 0;
  const byNode = new Map<string, string[]>();
  for (const c of world.creates) {
    const g = await read(bm, `/v1/allocations/${c.uuid}`);
    const there = g.status === 200;
    if (isOk(c.status) && !there) rec.violate(`allocation ${c.uuid}: answered ${c.status} but not stored`);
    if (is4xx(c.status) && there)
      rec.violate(`allocation ${c.uuid}: answered ${c.status} (${c.text.slice(0, 160)}) but stored (state ${g.json.state})`);
    // a fresh UUID and name: no Ironic error applies (a conflict is retried, not answered)
    else if (is4xx(c.status)) rec.violate(`allocation ${c.uuid}: a create of a fresh allocation answered ${c.status} (${c.text.slice(0, 160)})`);
    if (!there) continue;
    if (g.json.state === 'active') {
      active++;
      byNode.set(g.json.node_uuid, [...(byNode.get(g.json.node_uuid) ?? []), c.uuid]);
    } else if (g.json.state === 'error') error++;
    else rec.violate(`allocation ${c.uuid}: ended in state ${g.json.state}`);
  }
  for (const [node, allocs] of byNode) {
    if (allocs.length > 1) rec.violate(`node ${node}: double-booked by ${allocs.join(', ')}`);
    const n = await read(bm, `/v1/nodes/${node}`);
    if (n.json.allocation_uuid !== allocs[0] || n.json.instance_uuid !== allocs[0]) {
      rec.violate(
        `node ${node}: allocation_uuid ${n.json.allocation_uuid}, instance_uuid ${n.json.instance_uuid}, but allocation ${allocs[0]} is active on it`,
      );
    }
  }
  for (const node of world.nodes) {
    const n = await read(bm, `/v1/nodes/${node}`);
    if (n.json.allocation_uuid && !byNode.has(node))
      rec.violate(`node ${node}: holds allocation ${n.json.allocation_uuid}, which is not active on it`);
  }
  return { active, error };
}

/**
 * BAREMETAL_SCHEDULER=placement: Placement clients (as Nova's report client would)
 * claiming a node's unit while allocations race for the same nodes. Each consumer is
 * claimed by one worker, once: after a 2xx it must hold the node's unit, after a 4xx
 * nothing, after a 5xx either.
 */
export interface ForeignClaims {
  claims: Array<{ consumer: string; node: string; status: number }>;
}

export async function foreignClaims(
  pl: Http,
  rec: Recorder,
  world: BaremetalWorld,
  placementClass: string,
  opts: { claims: number; parallel: number; seed: number },
): Promise<ForeignClaims> {
  const rnd = rng(opts.seed);
  const out: ForeignClaims = { claims: [] };
  await pool(opts.claims, opts.parallel, async () => {
    const consumer = randomUUID();
    const node = world.nodes[rnd(world.nodes.length)]!;
    const body = {
      allocations: { [node]: { resources: { [placementClass]: 1 } } },
      project_id: 'nova-project',
      user_id: 'nova-user',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    };
    const r = rec.add('placement', 'PUT /allocations/{c} (a node)', await pl.req('PUT', `/allocations/${consumer}`, body, '1.38'));
    out.claims.push({ consumer, node, status: r.status });
  });
  return out;
}

/**
 * The placement scheduler's invariants, through both APIs: every foreign claim's answer
 * matches what is stored; "Placement usage == active bare-metal allocations" (every
 * active allocation is a consumer holding its node's unit, and the BAREMETAL usage of
 * the allocations' project counts exactly them); "no node holds both a foreign Placement
 * allocation and a bare-metal allocation".
 */
export async function checkBaremetalPlacement(
  bm: Http,
  pl: Http,
  rec: Recorder,
  world: BaremetalWorld,
  foreign: ForeignClaims,
  placementClass: string,
  project: string,
): Promise<{ foreignHeld: number }> {
  let foreignHeld = 0;
  const foreignOn = new Map<string, string[]>();
  for (const c of foreign.claims) {
    const got = (await read(pl, `/allocations/${c.consumer}`)).json.allocations ?? {};
    const held = got[c.node]?.resources?.[placementClass] === 1;
    if (isOk(c.status) && !held) rec.violate(`foreign claim ${c.consumer} on ${c.node}: answered ${c.status} but not stored`);
    if (is4xx(c.status) && Object.keys(got).length) rec.violate(`foreign claim ${c.consumer} on ${c.node}: answered ${c.status} but stored`);
    if (held) {
      foreignHeld++;
      foreignOn.set(c.node, [...(foreignOn.get(c.node) ?? []), c.consumer]);
    }
  }
  let active = 0;
  for (const c of world.creates) {
    const a = await read(bm, `/v1/allocations/${c.uuid}`);
    if (a.status !== 200 || a.json.state !== 'active') continue;
    active++;
    const cons = (await read(pl, `/allocations/${c.uuid}`, '1.38')).json;
    const mine = cons.allocations?.[a.json.node_uuid]?.resources;
    if (JSON.stringify(mine) !== JSON.stringify({ [placementClass]: 1 }) || cons.consumer_type !== 'BAREMETAL') {
      rec.violate(
        `allocation ${c.uuid} active on ${a.json.node_uuid}, but its Placement consumer holds ${JSON.stringify(cons.allocations)} (${cons.consumer_type})`,
      );
    }
    const others = foreignOn.get(a.json.node_uuid) ?? [];
    if (others.length) rec.violate(`node ${a.json.node_uuid}: held by allocation ${c.uuid} and by Placement consumer(s) ${others.join(', ')}`);
  }
  for (const [node, consumers] of foreignOn)
    if (consumers.length > 1) rec.violate(`node ${node}: held by Placement consumers ${consumers.join(', ')}`);
  const usage = (await read(pl, `/usages?project_id=${project}`, '1.38')).json.usages?.BAREMETAL ?? {};
  if ((usage.consumer_count ?? 0) !== active || (usage[placementClass] ?? 0) !== active) {
    rec.violate(`Placement usage of ${project}: ${JSON.stringify(usage)}, but ${active} bare-metal allocations are active`);
  }
  return { foreignHeld };
}

// ------------------------------------------------------------------ report

/** the nearest-rank percentile (bench/kit.ts), 0 of nothing */
export function percentile(xs: number[], p: number): number {
  return xs.length ? pct(xs, p) : 0;
}

export function byStatus(answers: Answer[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) out[a.status] = (out[a.status] ?? 0) + 1;
  return out;
}
