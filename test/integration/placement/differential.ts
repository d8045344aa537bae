/**
 * Differential test: Berth vs. the real Placement 8.0.0 on random request sequences.
 *
 *   npx tsx test/integration/placement/differential.ts [--rounds 20] [--ops 150] [--seed N]
 *       [--ref-port 18520] [--our-port 18521]
 *
 * Each round starts the reference (../shared/reference/serve-placement.sh, fresh
 * SQLite) and a fresh local Berth stack, then sends both the same random walk of
 * requests over every endpoint except allocation candidates (which
 * test/integration/candidates/differential.ts covers): providers (nested, re-parented,
 * renamed, deleted), inventories (valid and invalid fields), traits, aggregates in both
 * forms, allocations in every microversion form with right / stale / null consumer
 * generations, POST /allocations, usages, resource classes and traits — each at a random
 * microversion, so the microversion gates are compared too. Status, error code, title and
 * detail, and the normalised body (no request ids, timestamps or hosts; lists sorted) must
 * match. A round stops at its first mismatch (both states may differ from there on).
 *
 * Deliberate differences (docs/running.md, "Side by side with the real services") are counted as known, not reported:
 *  - an empty PUT/POST of allocations for a consumer without record creates no record
 *    (upstream keeps one at generation 0);
 *  - renaming a custom resource class in use (1.2–1.6) is refused with 409.
 * Exit status 1 on any mismatch.
 */
import {
  arg,
  normalizeJson,
  placementCall as call,
  prng,
  referenceLauncher,
  runRounds,
  waitForUp,
  withServers,
  type JsonRes as Res,
  type Prng as R,
  reportMismatch,
  type RoundResult,
  normalizeOrdered,
  traitOrderKey,
  type OrderRules,
} from '../differential-kit.js';
import { isStandardTrait } from '../../../functions/core/placement/standard.js';
import { jsonNumberLiterals } from '../../../functions/core/compat/pyfloat.js';

const ROUNDS = arg('rounds', 20);
const OPS = arg('ops', 150);
const SEED = arg('seed', Date.now() % 100000);
const REF_PORT = arg('ref-port', 18520);
const OUR_PORT = arg('our-port', 18521);
const statuses: Record<string, number> = {};

const DROP = new Set(['request_id', 'created_at', 'updated_at']);
/** order-insensitive (for the fuzzy "known difference" checks) */
const normalize = (v: unknown) => normalizeJson(v, DROP);

/** objects whose keys are data (consumers, providers, classes, consumer types): their key order is compared */
const DATA_KEYED = new Set(['allocations', 'inventories', 'usages', 'resources']);
function dataKeyed(path: readonly string[]): boolean {
  const parent = path[path.length - 1];
  if (parent !== undefined && DATA_KEYED.has(parent)) return true;
  // GET /usages from 1.38: { usages: { <type>: { <class>: n, consumer_count: n } } }
  return path.length === 2 && path[0] === 'usages';
}

/**
 * The order comparison. Upstream's order is not stable (it changes with the hash seed
 * of the reference's process, or follows ids Berth does not keep) for:
 *  - standard traits among themselves (synced from a Python set): traitOrderKey;
 *  - aggregates first seen in the same PUT (created in Python set order): ties sorted,
 *    see aggregateBatches;
 *  - the consumer types of GET /usages that start with the same class (upstream goes
 *    by the order the deployment first used each type);
 *  - a provider's inventories in GET: upstream lists its rows as inserted, and the
 *    classes one PUT adds are inserted in an order that changes with the hash seed
 *    (the same PUT gave three orders under PYTHONHASHSEED 1, 2, 3); Berth lists them
 *    in class order, as usages (whose GROUP BY upstream answers in class order). A
 *    write's echo keeps the request's order on both sides and is compared in order.
 */
function orderRules(batches: AggregateBatches, op: () => Op): OrderRules {
  return {
    unorderedKeys: (path) =>
      (path.length === 1 && path[0] === 'usages' && op().path.startsWith('/usages')) ||
      (path.length === 1 && path[0] === 'inventories' && op().method === 'GET'),
    list: (path, xs) => {
      const last = path[path.length - 1];
      if (last === 'traits') return traitOrderKey(xs, isStandardTrait);
      if (last === 'aggregates') return batches.key(xs);
      return undefined;
    },
  };
}

/**
 * When each aggregate was first seen (the index of the successful PUT that first named
 * it): upstream lists a provider's aggregates by internal id, i.e. in that order, and
 * those first seen together in an order that changes with the hash seed.
 */
class AggregateBatches {
  private readonly firstSeen = new Map<string, number>();
  private puts = 0;
  saw(aggregates: readonly string[]): void {
    this.puts++;
    for (const a of aggregates) if (!this.firstSeen.has(a)) this.firstSeen.set(a, this.puts);
  }
  /** the list as runs of one batch each, sorted within the run; an out-of-order list is left as it is */
  key(xs: string[]): unknown[] {
    const b = xs.map((x) => this.firstSeen.get(x) ?? Number.MAX_SAFE_INTEGER);
    if (b.some((x, i) => i > 0 && x < b[i - 1]!)) return xs;
    const runs: string[][] = [];
    xs.forEach((x, i) => {
      if (i === 0 || b[i] !== b[i - 1]) runs.push([]);
      runs[runs.length - 1]!.push(x);
    });
    return runs.map((r) => [...r].sort());
  }
}

/** every number of the body as written (`16.0` is not `16`: a Python client parses a float and an int) */
function numbers(r: Res): string {
  return JSON.stringify([...jsonNumberLiterals(r.text)].sort());
}

const STD_RC = ['VCPU', 'MEMORY_MB', 'DISK_GB'];
const CUSTOM_RC = ['CUSTOM_A', 'CUSTOM_B'];
const STD_TRAITS = ['HW_CPU_X86_AVX2', 'STORAGE_DISK_SSD', 'MISC_SHARES_VIA_AGGREGATE'];
const CUSTOM_TRAITS = ['CUSTOM_T1', 'CUSTOM_T2'];
const PROJECTS = ['proj-a', 'proj-b'];
const USERS = ['user-a', 'user-b'];
const hex = (n: number, w: number) => n.toString(16).padStart(w, '0');
const uuidN = (kind: number, i: number) => `${hex(kind, 8)}-0000-4000-8000-${hex(i, 12)}`;
const RPS = Array.from({ length: 6 }, (_, i) => uuidN(0xa, i + 1));
const CONSUMERS = Array.from({ length: 5 }, (_, i) => uuidN(0xc, i + 1));
const AGGS = Array.from({ length: 3 }, (_, i) => uuidN(0xa99, i + 1));

interface Op {
  method: string;
  path: string;
  version: string;
  body?: unknown;
}

/** the last observed state (from the reference) that makes requests plausible */
interface Seen {
  rpGen: Map<string, number>;
  /** classes each provider has inventory of */
  inv: Map<string, string[]>;
  consumerGen: Map<string, number | null>;
}

function version(r: R, min = 0): string {
  if (r.chance(0.35)) return '1.39';
  if (r.chance(0.05)) return 'latest';
  return `1.${r.int(min, 39)}`;
}

function rcs(r: R): string[] {
  return r.some([...STD_RC, ...CUSTOM_RC], 3);
}

function inventory(r: R): Record<string, unknown> {
  const total = r.chance(0.05) ? r.pick([0, -1, 'x', 2 ** 31]) : r.int(1, 64);
  const inv: Record<string, unknown> = { total };
  if (r.chance(0.3)) inv.reserved = r.chance(0.1) ? -1 : r.int(0, typeof total === 'number' ? Math.max(total, 0) : 4);
  if (r.chance(0.2)) inv.min_unit = r.int(0, 4);
  if (r.chance(0.2)) inv.max_unit = r.int(0, 80);
  if (r.chance(0.2)) inv.step_size = r.int(0, 4);
  if (r.chance(0.2)) inv.allocation_ratio = r.pick([0.5, 1, 1.5, 16, 0, -1]);
  if (r.chance(0.03)) inv.bogus = 1;
  return inv;
}

function gen(r: R, seen: Seen, rp: string): number | undefined {
  const g = seen.rpGen.get(rp) ?? 0;
  if (r.chance(0.1)) return g + r.int(1, 2);
  if (r.chance(0.03)) return undefined;
  return g;
}

function listQuery(r: R): string {
  const parts: string[] = [];
  if (r.chance(0.2)) parts.push(`name=${r.pick(['rp0', 'rp1', 'rp2', 'nope'])}`);
  if (r.chance(0.15)) parts.push(`uuid=${r.pick(RPS)}`);
  if (r.chance(0.25)) {
    const form = r.int(0, 4);
    const a = r.some(AGGS, 2);
    const list = a.length ? a.join(',') : AGGS[0]!;
    parts.push(`member_of=${[list.includes(',') ? `in:${list}` : list, `in:${list}`, `!${AGGS[0]}`, `!in:${list}`, 'in:'][form]}`);
    if (r.chance(0.2)) parts.push(`member_of=${r.pick(AGGS)}`);
  }
  if (r.chance(0.25))
    parts.push(
      `resources=${
        rcs(r)
          .map((c) => `${c}:${r.int(0, 8)}`)
          .join(',') || 'VCPU:1'
      }`,
    );
  if (r.chance(0.25)) {
    const t = r.some([...STD_TRAITS, ...CUSTOM_TRAITS], 2).map((x) => (r.chance(0.3) ? `!${x}` : x));
    parts.push(`required=${r.chance(0.2) ? `in:${STD_TRAITS.slice(0, 2).join(',')}` : t.join(',') || 'HW_CPU_X86_AVX2'}`);
  }
  if (r.chance(0.15)) parts.push(`in_tree=${r.pick(RPS)}`);
  if (r.chance(0.03)) parts.push('bogus=1');
  return parts.length ? `?${parts.join('&')}` : '';
}

function allocationsBody(r: R, v: number, seen: Seen, consumer: string): unknown {
  // mostly plausible claims: providers with inventory, classes they have, small amounts
  const stocked = RPS.filter((u) => seen.inv.get(u)?.length);
  const plausible = stocked.length > 0 && r.chance(0.75);
  const rps = plausible
    ? r
        .some(stocked, 2)
        .concat(stocked.length ? [r.pick(stocked)] : [])
        .filter((u, i, xs) => xs.indexOf(u) === i)
        .slice(0, 2)
    : r.some(RPS, 2);
  const amounts = (rp?: string) =>
    Object.fromEntries(
      (plausible && rp
        ? r
            .some(seen.inv.get(rp) ?? [], 2)
            .concat(seen.inv.get(rp)!.slice(0, 1))
            .filter((c, i, xs) => xs.indexOf(c) === i)
        : rcs(r)
      ).map((c) => [c, r.chance(0.05) ? r.pick([0, -1]) : plausible ? r.int(1, 2) : r.int(1, 6)]),
    );
  const empty = r.chance(0.15);
  if (v < 12) {
    const body: any = { allocations: empty ? [] : rps.map((rp) => ({ resource_provider: { uuid: rp }, resources: amounts(rp) })) };
    if (v >= 8 && !r.chance(0.05)) Object.assign(body, { project_id: r.pick(PROJECTS), user_id: r.pick(USERS) });
    return body;
  }
  const body: any = { allocations: empty ? {} : Object.fromEntries(rps.map((rp) => [rp, { resources: amounts(rp) }])) };
  if (!r.chance(0.05)) Object.assign(body, { project_id: r.pick(PROJECTS), user_id: r.pick(USERS) });
  if (v >= 28) {
    const g = seen.consumerGen.get(consumer);
    body.consumer_generation = r.chance(0.1) ? (g ?? 0) + 1 : r.chance(0.05) ? undefined : (g ?? null);
  }
  if (v >= 38 && r.chance(0.6)) body.consumer_type = r.pick(['INSTANCE', 'MIGRATION', 'bad type']);
  return body;
}

function randomOp(r: R, seen: Seen, i: number): Op {
  const rp = r.pick(RPS);
  const v = version(r);
  const vn = v === 'latest' ? 39 : Number(v.split('.')[1]);
  const k = r.int(0, 27);
  switch (k) {
    case 0:
    case 1: {
      const body: any = { name: r.chance(0.2) ? `rp${r.int(0, 2)}` : `rp-${i}` };
      body.uuid = r.pick(RPS); // (a server-chosen uuid could not be compared)
      if (r.chance(0.35)) body.parent_provider_uuid = r.chance(0.1) ? uuidN(0xdead, 1) : r.pick(RPS);
      return { method: 'POST', path: '/resource_providers', version: v, body };
    }
    case 2: {
      const body: any = { name: r.chance(0.3) ? `rp${r.int(0, 2)}` : `renamed-${i}` };
      if (r.chance(0.4)) body.parent_provider_uuid = r.chance(0.3) ? null : r.pick(RPS);
      return { method: 'PUT', path: `/resource_providers/${rp}`, version: v, body };
    }
    case 3:
      return { method: 'DELETE', path: `/resource_providers/${rp}`, version: v };
    case 4:
    case 5:
      return { method: 'GET', path: `/resource_providers${listQuery(r)}`, version: v };
    case 6:
      return { method: 'GET', path: `/resource_providers/${rp}`, version: v };
    case 7:
    case 8: {
      const inventories = Object.fromEntries(rcs(r).map((c) => [c, inventory(r)]));
      return {
        method: 'PUT',
        path: `/resource_providers/${rp}/inventories`,
        version: v,
        body: { resource_provider_generation: gen(r, seen, rp), inventories },
      };
    }
    case 9:
      return {
        method: 'POST',
        path: `/resource_providers/${rp}/inventories`,
        version: v,
        body: { resource_class: r.pick([...STD_RC, ...CUSTOM_RC]), ...inventory(r) },
      };
    case 10: {
      const c = r.pick([...STD_RC, ...CUSTOM_RC]);
      return r.chance(0.5)
        ? {
            method: 'PUT',
            path: `/resource_providers/${rp}/inventories/${c}`,
            version: v,
            body: { resource_provider_generation: gen(r, seen, rp), ...inventory(r) },
          }
        : { method: 'DELETE', path: `/resource_providers/${rp}/inventories/${c}`, version: v };
    }
    case 11:
      return r.chance(0.5)
        ? { method: 'DELETE', path: `/resource_providers/${rp}/inventories`, version: v }
        : { method: 'GET', path: `/resource_providers/${rp}/inventories`, version: v };
    case 12:
      return {
        method: 'PUT',
        path: `/resource_providers/${rp}/traits`,
        version: v,
        body: { resource_provider_generation: gen(r, seen, rp), traits: r.some([...STD_TRAITS, ...CUSTOM_TRAITS]) },
      };
    case 13:
      return r.chance(0.5)
        ? { method: 'DELETE', path: `/resource_providers/${rp}/traits`, version: v }
        : { method: 'GET', path: `/resource_providers/${rp}/traits`, version: v };
    case 14: {
      const aggs = r.some(AGGS);
      return {
        method: 'PUT',
        path: `/resource_providers/${rp}/aggregates`,
        version: v,
        body: vn >= 19 ? { resource_provider_generation: gen(r, seen, rp), aggregates: aggs } : aggs,
      };
    }
    case 15:
      return { method: 'GET', path: `/resource_providers/${rp}/aggregates`, version: v };
    case 16:
    case 17:
    case 18: {
      const c = r.pick(CONSUMERS);
      return { method: 'PUT', path: `/allocations/${c}`, version: v, body: allocationsBody(r, vn, seen, c) };
    }
    case 19: {
      const cs = r.some(CONSUMERS, 2);
      const body = Object.fromEntries(cs.map((c) => [c, allocationsBody(r, Math.max(vn, 12), seen, c)]));
      return { method: 'POST', path: '/allocations', version: v, body };
    }
    case 20:
      return { method: 'DELETE', path: `/allocations/${r.pick(CONSUMERS)}`, version: v };
    case 21:
      return r.chance(0.5)
        ? { method: 'GET', path: `/allocations/${r.pick(CONSUMERS)}`, version: v }
        : { method: 'GET', path: `/resource_providers/${rp}/allocations`, version: v };
    case 22: {
      const q = [`project_id=${r.pick(PROJECTS)}`];
      if (r.chance(0.4)) q.push(`user_id=${r.pick(USERS)}`);
      if (r.chance(0.3)) q.push(`consumer_type=${r.pick(['INSTANCE', 'MIGRATION', 'all', 'unknown', 'INSTANCE,MIGRATION'])}`);
      if (r.chance(0.05)) q.shift();
      return r.chance(0.7)
        ? { method: 'GET', path: `/usages?${q.join('&')}`, version: v }
        : { method: 'GET', path: `/resource_providers/${rp}/usages`, version: v };
    }
    case 23: {
      const c = r.pick([...CUSTOM_RC, 'CUSTOM_C', 'VCPU', 'bad']);
      const m = r.int(0, 3);
      if (m === 0) return { method: 'POST', path: '/resource_classes', version: v, body: { name: c } };
      if (m === 1)
        return { method: 'PUT', path: `/resource_classes/${c}`, version: v, body: vn < 7 ? { name: r.pick([...CUSTOM_RC, 'CUSTOM_C']) } : undefined };
      if (m === 2) return { method: 'DELETE', path: `/resource_classes/${c}`, version: v };
      return { method: 'GET', path: r.chance(0.5) ? '/resource_classes' : `/resource_classes/${c}`, version: v };
    }
    case 24: {
      const t = r.pick([...CUSTOM_TRAITS, 'CUSTOM_T3', 'HW_CPU_X86_AVX2', 'bad']);
      const m = r.int(0, 3);
      if (m === 0) return { method: 'PUT', path: `/traits/${t}`, version: v };
      if (m === 1) return { method: 'DELETE', path: `/traits/${t}`, version: v };
      if (m === 2) return { method: 'GET', path: `/traits/${t}`, version: v };
      const q = r.pick([
        '',
        '?associated=true',
        '?associated=false',
        '?name=startswith:CUSTOM',
        '?name=in:CUSTOM_T1,HW_CPU_X86_AVX2',
        '?name=CUSTOM_T1',
        '?associated=maybe',
      ]);
      return { method: 'GET', path: `/traits${q}`, version: v };
    }
    case 25:
      return { method: 'GET', path: `/allocations/${r.pick(CONSUMERS)}`, version: v };
    case 26: {
      // a reshape moving a consumer's allocation onto another provider with fresh inventory
      const [a, b] = [r.pick(RPS), r.pick(RPS)];
      const c = r.pick(CONSUMERS);
      const inv = { [a]: { resource_provider_generation: seen.rpGen.get(a) ?? 0, inventories: { VCPU: { total: r.int(1, 16) } } } };
      const allocations = {
        [c]: {
          allocations: { [b]: { resources: { VCPU: 1 } } },
          project_id: r.pick(PROJECTS),
          user_id: r.pick(USERS),
          consumer_generation: seen.consumerGen.get(c) ?? null,
          ...(vn >= 38 ? { consumer_type: 'INSTANCE' } : {}),
        },
      };
      return { method: 'POST', path: '/reshaper', version: v, body: { inventories: inv, allocations } };
    }
    default:
      return { method: 'GET', path: r.pick(['/', '/resource_classes', '/traits?associated=true', `/resource_providers/${rp}/usages`]), version: v };
  }
}

/** refresh what the walk knows (generations) from the reference */
async function observe(refUrl: string, seen: Seen): Promise<void> {
  const rps = await call(refUrl, 'GET', '/resource_providers', '1.39');
  seen.rpGen = new Map((rps.json?.resource_providers ?? []).map((p: any) => [p.uuid, p.generation]));
  seen.inv = new Map();
  for (const u of seen.rpGen.keys()) {
    const inv = await call(refUrl, 'GET', `/resource_providers/${u}/inventories`, '1.39');
    seen.inv.set(u, Object.keys(inv.json?.inventories ?? {}));
  }
  for (const c of CONSUMERS) {
    const a = await call(refUrl, 'GET', `/allocations/${c}`, '1.39');
    seen.consumerGen.set(c, a.json?.consumer_generation ?? null);
  }
}

function known(op: Op, a: Res, b: Res): string | null {
  const body: any = op.body;
  // upstream joins some name sets in Python's (per-process, hash-seeded) set order
  const words = (r: Res) =>
    JSON.stringify(normalize(r.json))
      .split(/[^A-Za-z0-9_.-]+/)
      .sort()
      .join(' ');
  if (a.status === b.status && a.json?.errors && words(a) === words(b)) return 'python set order';
  // of several unknown traits in a query, upstream names the first of a Python set
  // (ids_from_names over a set): which one changes with the hash seed
  const anyTrait = (r: Res) => JSON.stringify(normalize(r.json)).replace(/No such trait\(s\): [A-Z0-9_, ]+/g, 'No such trait(s): …');
  if (a.status === 400 && b.status === 400 && /No such trait\(s\)/.test(JSON.stringify(a.json)) && anyTrait(a) === anyTrait(b))
    return 'python set order';
  // upstream leaks the SQL error of a duplicate inventory insert; Berth says what exists
  if (a.status === b.status && a.json?.errors?.[0]?.code === b.json?.errors?.[0]?.code && /sqlite3\./.test(JSON.stringify(a.json)))
    return 'upstream SQL text';
  // a record upstream kept after a failed or empty write keeps its consumer type: the
  // same usage, grouped under another type
  const flat = (r: Res) => {
    const sum: Record<string, number> = {};
    for (const u of Object.values<any>(r.json?.usages ?? {}))
      if (u && typeof u === 'object') for (const [k, n] of Object.entries<number>(u)) sum[k] = (sum[k] ?? 0) + n;
    return JSON.stringify(normalize(sum));
  };
  const untyped = (r: Res) => JSON.stringify(normalize({ ...r.json, consumer_type: undefined }));
  if (op.path.startsWith('/allocations/') && a.status === 200 && b.status === 200 && b.json?.consumer_type === 'unknown' && untyped(a) === untyped(b))
    return 'gen-0 consumer record (its type)';
  if (op.path.startsWith('/usages') && a.status === 200 && b.status === 200 && flat(a) === flat(b)) return 'gen-0 consumer record (its type)';
  const emptyAlloc = (x: any) =>
    x && (Array.isArray(x.allocations) ? x.allocations.length === 0 : x.allocations && Object.keys(x.allocations).length === 0);
  // upstream keeps a generation-0 record after an empty write for a new consumer; a later
  // null generation is refused there ("expected 0 but got None")
  if (a.status === 409 && /expected 0 but got/.test(JSON.stringify(a.json))) return 'gen-0 consumer record';
  if (op.method === 'PUT' && op.path.startsWith('/allocations/') && emptyAlloc(body) && a.status === b.status) return 'gen-0 consumer record';
  if (op.method === 'PUT' && op.path.startsWith('/resource_classes/') && a.status === 200 && b.status === 409 && body?.name) return 'rename in use';
  if (
    op.method === 'GET' &&
    op.path.startsWith('/allocations/') &&
    a.status === 200 &&
    b.status === 200 &&
    a.json?.consumer_generation === 0 &&
    !Object.keys(a.json?.allocations ?? {}).length
  )
    return 'gen-0 consumer record';
  return null;
}

async function round(ri: number): Promise<RoundResult> {
  const ref = { script: referenceLauncher('serve-placement.sh'), port: REF_PORT, ready: (url: string) => waitForUp(url, 60_000) };
  return withServers(ref, { placementPort: OUR_PORT, baremetalPort: 0 }, async (refUrl, stack) => {
    const ourUrl = stack.placementUrl;
    const knownCounts: Record<string, number> = {};
    let compared = 0;
    let mismatch = false;
    const r = prng(SEED * 1000 + ri);
    const seen: Seen = { rpGen: new Map(), inv: new Map(), consumerGen: new Map() };
    const batches = new AggregateBatches();
    let op: Op = { method: '', path: '', version: '' };
    const rules = orderRules(batches, () => op);
    const ordered = (x: Res) => JSON.stringify(normalizeOrdered(x.json, DROP, rules, dataKeyed));
    const log: string[] = [];
    for (let i = 0; i < OPS; i++) {
      if (i % 5 === 0) await observe(refUrl, seen);
      op = randomOp(r, seen, i);
      const a = await call(refUrl, op.method, op.path, op.version, op.body);
      const b = await call(ourUrl, op.method, op.path, op.version, op.body);
      compared++;
      statuses[`${op.method} ${a.status}`] = (statuses[`${op.method} ${a.status}`] ?? 0) + 1;
      const line = `${op.method} ${op.path} @${op.version} ${op.body !== undefined ? JSON.stringify(op.body) : ''}`;
      log.push(`  ${line} -> ${a.status}`);
      if (op.method === 'PUT' && op.path.endsWith('/aggregates') && a.status === 200)
        batches.saw(Array.isArray(op.body) ? op.body : ((op.body as any)?.aggregates ?? []));
      const na = ordered(a);
      const nb = ordered(b);
      if (a.status === b.status && na === nb && numbers(a) === numbers(b)) continue;
      const k = known(op, a, b);
      if (k) {
        knownCounts[k] = (knownCounts[k] ?? 0) + 1;
        if (a.status === b.status || (a.status >= 400 && b.status >= 400)) continue; // neither changed anything
        // the reference refused a new consumer's write because it kept a generation-0
        // record: send it again there with generation 0, so both states stay equal
        const body: any = op.body;
        if (
          k === 'gen-0 consumer record' &&
          op.method === 'PUT' &&
          b.status < 300 &&
          body &&
          typeof body === 'object' &&
          'consumer_generation' in body
        ) {
          const again = await call(refUrl, op.method, op.path, op.version, { ...body, consumer_generation: 0 });
          if (again.status === b.status) continue;
        }
        knownCounts[`round ended by: ${k}`] = (knownCounts[`round ended by: ${k}`] ?? 0) + 1;
        if (process.env.DIFF_VERBOSE) console.log(`\n  ended: ${line}\n  ref ${a.status} ${na}\n  our ${b.status} ${nb}`);
        break; // states differ from here on: next round
      }
      mismatch = true;
      reportMismatch(`round ${ri} (seed ${SEED}) op ${i}`, log, line, ['reference', a.status, na], ['berth', b.status, nb]);
      break;
    }
    return { compared, mismatch, known: knownCounts };
  });
}

void runRounds({ rounds: ROUNDS, seed: SEED, what: 'reference', round, statuses });
