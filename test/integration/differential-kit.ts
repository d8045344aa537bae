/**
 * What the differential runs (Berth vs. the reference Placement / Ironic in
 * ../shared/reference) share: command-line numbers, a seeded PRNG so a failing seed
 * replays, JSON over HTTP, waiting for a server, body normalisation, and starting /
 * stopping a reference server beside a fresh local stack.
 *   test/integration/candidates/differential.ts   GET /allocation_candidates
 *   test/integration/placement/differential.ts    every other Placement endpoint
 *   test/integration/baremetal/differential.ts    the bare-metal API vs Ironic
 */
import { join } from 'node:path';
import { startStack, type RunningStack } from '../../local/start.js';
import { sharedDir } from '../../scripts/optional-packages.mjs';
import { mulberry32 } from '../../local/prng.js';
import { startReference } from '../../bench/kit.js';

export { startReference, waitForUp, type ReferenceServer } from '../../bench/kit.js';

/**
 * A reference server's launcher in the shared materials: `../shared/reference/<name>`
 * beside the checkout, or under BERTH_SHARED (as `npm test` finds the conformance suite).
 */
export function referenceLauncher(name: 'serve-placement.sh' | 'serve-ironic.sh'): string {
  return join(sharedDir(), 'reference', name);
}

/** `--name N` from the command line, else `d` */
export function arg(name: string, d: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : d;
}

/** a seeded PRNG (mulberry32) with the draws the walks use */
export function prng(seed: number) {
  const next = mulberry32(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const chance = (p: number) => next() < p;
  const some = <T>(xs: readonly T[], max = xs.length): T[] => xs.filter(() => chance(0.5)).slice(0, max);
  return { next, int, pick, chance, some };
}
export type Prng = ReturnType<typeof prng>;

export interface JsonRes {
  status: number;
  /** the parsed body, the raw text if it is not JSON, undefined if empty */
  json: any;
  /** the body as sent */
  text: string;
}

export async function callJson(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<JsonRes> {
  const r = await fetch(base + path, {
    method,
    headers: { accept: 'application/json', ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: r.status, json, text };
}

/** a Placement request as the admin of noauth2 (`version` '' sends no microversion) */
export function placementCall(base: string, method: string, path: string, version: string, body?: unknown): Promise<JsonRes> {
  return callJson(base, method, path, { 'x-auth-token': 'admin', ...(version ? { 'openstack-api-version': `placement ${version}` } : {}) }, body);
}

/** poll until `ready` holds (errors count as not yet) */
export async function waitUntil(what: string, ready: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      if (await ready()) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`${what} did not come up`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/**
 * A body both sides can be compared by: keys sorted, `drop` keys removed, hosts cut
 * from hrefs, lists sorted (strings as strings, anything else by its JSON).
 */
export function normalizeJson(v: any, drop: ReadonlySet<string>): any {
  if (Array.isArray(v)) {
    const xs = v.map((x) => normalizeJson(x, drop));
    return xs.every((x) => typeof x === 'string') ? [...xs].sort() : xs.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  }
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      if (drop.has(k)) continue;
      out[k] = k === 'href' && typeof v[k] === 'string' ? v[k].replace(/^https?:\/\/[^/]+/, '') : normalizeJson(v[k], drop);
    }
    return out;
  }
  return v;
}

/**
 * Where a Placement answer's order is not the same from one reference run to the next
 * (upstream builds it from a Python set or dict whose order follows the per-process
 * hash seed, or from ids Berth cannot know), and how to compare it there. Everything
 * else is compared in order: list order and the key order of objects keyed by data
 * (consumers, providers, classes, consumer types), which clients print as they come.
 */
export interface OrderRules {
  /** lists compared as sets (e.g. allocation_requests, a mapping's providers) */
  unorderedList?: (path: readonly string[]) => boolean;
  /** objects whose keys are compared as a set, values still in order (e.g. /usages' consumer types) */
  unorderedKeys?: (path: readonly string[]) => boolean;
  /** a list to rewrite before comparing (e.g. aggregates: ties in first-seen order sorted) */
  list?: (path: readonly string[], xs: any[]) => any[] | undefined;
}

/**
 * Trait lists as upstream orders them: by trait id, i.e. every standard trait (synced
 * at start-up from a Python set: an order that changes with the hash seed) before the
 * custom ones (in creation order). Compared as: the standard ones sorted, then the
 * custom ones in their order — as long as no custom trait comes before a standard one
 * (then the list is left as it is, and differs).
 */
export function traitOrderKey(traits: string[], isStandard: (t: string) => boolean): string[] {
  const firstCustom = traits.findIndex((t) => !isStandard(t));
  if (firstCustom >= 0 && traits.slice(firstCustom).some(isStandard)) return traits;
  const std = traits.filter(isStandard).sort();
  return [...std, '|', ...traits.filter((t) => !isStandard(t))];
}

/**
 * An order-sensitive body to compare by: `drop` keys removed, hosts cut from hrefs,
 * lists and data-keyed objects in their order unless `rules` say the reference's order
 * is not stable there. Objects keyed by field names (status, title, …) are compared
 * with sorted keys: clients show fields by their own column lists.
 */
export function normalizeOrdered(
  v: any,
  drop: ReadonlySet<string>,
  rules: OrderRules,
  dataKeyed: (path: readonly string[]) => boolean,
  path: string[] = [],
): any {
  if (Array.isArray(v)) {
    let xs = v.map((x, i) => normalizeOrdered(x, drop, rules, dataKeyed, [...path, String(i)]));
    xs = rules.list?.(path, xs) ?? xs;
    if (rules.unorderedList?.(path)) xs = [...xs].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
    return xs;
  }
  if (v && typeof v === 'object') {
    const keyedByData = dataKeyed(path);
    let keys = Object.keys(v).filter((k) => !drop.has(k));
    if (!keyedByData || rules.unorderedKeys?.(path)) keys = keys.sort();
    // an object keyed by data keeps its keys' order in an array of pairs (JSON.stringify of an object would too, but this says so)
    const entries = keys.map((k) => [
      k,
      k === 'href' && typeof v[k] === 'string' ? v[k].replace(/^https?:\/\/[^/]+/, '') : normalizeOrdered(v[k], drop, rules, dataKeyed, [...path, k]),
    ]);
    return keyedByData ? { ordered: entries } : Object.fromEntries(entries);
  }
  return v;
}

/** Ironic is ready once its conductor has registered: GET /v1/drivers lists fake-hardware */
export function waitForIronic(url: string, ms: number): Promise<void> {
  return waitUntil(
    url,
    async () => {
      const r = await fetch(`${url}/v1/drivers`);
      return r.status === 200 && JSON.stringify(await r.json()).includes('fake-hardware');
    },
    ms,
  );
}

/**
 * Run `body` with a reference server and a fresh local Berth stack; both are stopped
 * afterwards, whatever happens.
 */
export async function withServers<T>(
  ref: { script: string; port: number; ready: (url: string) => Promise<void> },
  stackPorts: { placementPort: number; baremetalPort: number },
  body: (refUrl: string, stack: RunningStack) => Promise<T>,
): Promise<T> {
  const server = startReference(ref.script, ref.port);
  let stack: RunningStack | undefined;
  try {
    stack = await startStack({ fresh: true, ...stackPorts, host: '127.0.0.1', maintenanceInterval: 0, dataDir: '', dashboardPort: null });
    await ref.ready(server.url);
    return await body(server.url, stack);
  } finally {
    server.stop();
    await stack?.stop();
    await new Promise((res) => setTimeout(res, 1000));
  }
}

export interface RoundResult {
  compared: number;
  mismatch: boolean;
  known: Record<string, number>;
}

/** the rounds (or only `--round K`), a dot or X each, a summary line; exit 1 on any mismatch */
export async function runRounds(opts: {
  rounds: number;
  seed: number;
  what: string;
  round: (ri: number) => Promise<RoundResult>;
  statuses: Record<string, number>;
}): Promise<never> {
  process.env.LOG_LEVEL ??= 'warn';
  let compared = 0;
  let mismatches = 0;
  const known: Record<string, number> = {};
  const only = arg('round', -1);
  let ran = 0;
  for (let ri = 0; ri < opts.rounds; ri++) {
    if (only >= 0 && ri !== only) continue;
    ran++;
    const res = await opts.round(ri);
    compared += res.compared;
    if (res.mismatch) mismatches++;
    for (const [k, n] of Object.entries(res.known)) known[k] = (known[k] ?? 0) + n;
    process.stdout.write(res.mismatch ? 'X' : '.');
  }
  console.log(
    `\nseed ${opts.seed}: ${ran} rounds, ${compared} requests compared (in order), ${mismatches} rounds with a mismatch; known differences ${JSON.stringify(known)}`,
  );
  console.log(`${opts.what} statuses: ${JSON.stringify(Object.fromEntries(Object.entries(opts.statuses).sort()))}`);
  process.exit(mismatches ? 1 : 0);
}

/** print a mismatch: the requests that led to it (all of them with DIFF_VERBOSE), then both answers */
export function reportMismatch(where: string, log: string[], line: string, ...answers: Array<[label: string, status: number, body: string]>): void {
  console.log(`\n${where} MISMATCH`);
  console.log(log.slice(process.env.DIFF_VERBOSE ? 0 : -12, -1).join('\n'));
  console.log(`  >> ${line}`);
  const width = Math.max(...answers.map(([label]) => label.length));
  for (const [label, status, body] of answers) console.log(`  ${label.padEnd(width)} ${status} ${body}`);
}
