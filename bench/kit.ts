/**
 * What every bench module shares: the scenario types `npm run bench` (bench/run.ts)
 * drives, HTTP clients for both APIs, a worker pool, percentiles and rounding, the
 * bare-metal setup the race and the accountant need, placeload's provider shape, and
 * where the shared materials are. It imports nothing from bench/ (so bench/ has no
 * import circle: scripts/check-layers.mjs refuses one) and the tests take `pool()` from
 * here too.
 */
import type { OptionSpec } from '../scripts/args.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningStack } from '../local/start.js';
import { sharedDir } from '../scripts/optional-packages.mjs';

// ------------------------------------------------------------------ scenarios

export interface BenchContext {
  stack: RunningStack;
  quick: boolean;
  /** record one figure (JSON line) */
  emit(record: Record<string, unknown>): void;
  /** print a human line */
  say(line: string): void;
  args: Record<string, string>;
}

export interface Scenario {
  name: string;
  description: string;
  /** run against a fresh stack; `ctx.stack` is stopped afterwards */
  run(ctx: BenchContext): Promise<void>;
  /** opt-in only (e.g. very long runs) */
  optional?: boolean;
  /** the options it reads from the command line (ctx.args: a switch reads 'true'), beyond the bench's own */
  options?: Record<string, OptionSpec>;
}

/** a scenario option that takes a value (`--providers 1000`) */
export const VALUE: OptionSpec = { type: 'string' };
/** a scenario option that is a switch (`--verify`) */
export const SWITCH: OptionSpec = { type: 'boolean' };

// ------------------------------------------------------------------ numbers

/** run `n` tasks (task(0) … task(n - 1)) with at most `parallel` at a time; results in task order */
export async function pool<T>(n: number, parallel: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, n) }, async () => {
      for (let i = next++; i < n; i = next++) out[i] = await task(i);
    }),
  );
  return out;
}

/** the nearest-rank p-th percentile (NaN of nothing) */
export function pct(values: number[], p: number): number {
  if (!values.length) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

/** rounded to one decimal */
export const r1 = (x: number) => Math.round(x * 10) / 10;
/** rounded to two decimals */
export const r2 = (x: number) => Math.round(x * 100) / 100;

// ------------------------------------------------------------------ clients

export interface TimedRes {
  status: number;
  json: any;
  ms: number;
}

/** Placement as the admin of noauth2, timed; the body parsed when it is JSON */
export function placementClient(base: string) {
  return async (method: string, path: string, body?: unknown, version = '1.28'): Promise<TimedRes> => {
    const t0 = performance.now();
    const r = await fetch(base + path, {
      method,
      headers: {
        'x-auth-token': 'admin',
        accept: 'application/json',
        'openstack-api-version': `placement ${version}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await r.text();
    const ms = performance.now() - t0;
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: r.status, json, ms };
  };
}
export type PlacementClient = ReturnType<typeof placementClient>;

/** the bare-metal microversion the bench speaks */
const BM_VERSION = '1.80';

/** the bare-metal API (no token locally, as Ironic's noauth) */
export function baremetalClient(base: string) {
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> => {
    const r = await fetch(base + path, {
      method,
      headers: { 'x-openstack-ironic-api-version': BM_VERSION, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await r.text();
    return { status: r.status, json: text ? JSON.parse(text) : undefined };
  };
}
export type BaremetalClient = ReturnType<typeof baremetalClient>;

/** poll `check` every `every` ms until it holds; throws after `ms` */
export async function until(what: string, check: () => Promise<boolean>, ms = 60_000, every = 20): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/** enroll `count` fake-hardware nodes of class `rc` and bring each to available, powered off */
export async function availableNodes(api: BaremetalClient, rc: string, count: number): Promise<string[]> {
  const uuids: string[] = [];
  for (let i = 0; i < count; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, count - i) }, async (_, j) => {
        const c = await api('POST', '/v1/nodes', { driver: 'fake-hardware', resource_class: rc, name: `${rc}-${i + j}` });
        if (c.status !== 201) throw new Error(`node create: ${c.status} ${JSON.stringify(c.json)}`);
        return c.json.uuid as string;
      }),
    );
    uuids.push(...batch);
  }
  const step = async (u: string, path: string, body: unknown, done: (n: any) => boolean) => {
    const r = await api('PUT', `/v1/nodes/${u}/${path}`, body);
    if (r.status !== 202) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.json)}`);
    await until(`${path} on ${u}`, async () => done((await api('GET', `/v1/nodes/${u}?fields=provision_state,power_state,reservation`)).json));
  };
  for (let i = 0; i < uuids.length; i += 10) {
    await Promise.all(
      uuids.slice(i, i + 10).map(async (u) => {
        await step(u, 'states/provision', { target: 'manage' }, (n) => n.provision_state === 'manageable' && !n.reservation);
        await step(u, 'states/provision', { target: 'provide' }, (n) => n.provision_state === 'available' && !n.reservation);
        await step(u, 'states/power', { target: 'power off' }, (n) => n.power_state === 'power off' && !n.reservation);
      }),
    );
  }
  return uuids;
}

// ------------------------------------------------------------------ data

/** three fresh aggregate uuids, as placeload makes them */
export const threeAggregates = () => [randomUUID(), randomUUID(), randomUUID()];

/** `n` flat providers shaped as upstream's placeload makes them, numbered from `offset`, in `aggs` (three) */
export function perfloadProviders(n: number, offset: number, aggs: string[]) {
  const traits = [['HW_CPU_X86_AVX2'], ['HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE2'], ['HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE2', 'STORAGE_DISK_SSD']];
  return Array.from({ length: n }, (_, k) => {
    const i = offset + k;
    return {
      uuid: randomUUID(),
      name: `perfload-${i}`,
      inventories: {
        VCPU: { total: 32, max_unit: 16 },
        MEMORY_MB: { total: 8192, min_unit: 128, max_unit: 8192 },
        DISK_GB: { total: 8192, min_unit: 5, max_unit: 8192 },
      },
      aggregates: aggs.slice(0, (i % 3) + 1),
      traits: traits[i % 3]!,
    };
  });
}

/** a path in the shared materials: ../shared beside the checkout, or BERTH_SHARED */
export function sharedPath(...parts: string[]): string {
  return join(sharedDir(), ...parts);
}

// ------------------------------------------------------------------ DynamoDB calls of this process

/** A call the store's DynamoDB clients sent: its command (without "Command"), input, and answer (none if it failed). */
export interface DdbCall {
  command: string;
  input: Record<string, any>;
  output?: Record<string, any>;
}

/**
 * Run `fn`, recording every DynamoDB call this process's store makes meanwhile (both of
 * its clients: store/ddb/client.ts ddbCallStacks). Call after the table is chosen.
 */
export async function ddbCallsDuring<T>(fn: () => Promise<T>): Promise<{ value: T; calls: DdbCall[] }> {
  const { ddbCallStacks } = await import('../functions/store/ddb/client.js');
  const calls: DdbCall[] = [];
  const name = `calls-${randomUUID()}`;
  const stacks = ddbCallStacks();
  for (const s of stacks)
    s.middlewareStack.add(
      (next, context) => async (args) => {
        const call: DdbCall = {
          command: String((context as { commandName?: string }).commandName ?? '?').replace(/Command$/, ''),
          input: args.input as Record<string, any>,
        };
        calls.push(call);
        const out = await next(args);
        call.output = out.output as Record<string, any>;
        return out;
      },
      { step: 'initialize', name },
    );
  try {
    return { value: await fn(), calls };
  } finally {
    for (const s of stacks) s.middlewareStack.remove(name);
  }
}

/** calls by command */
export function callCounts(calls: readonly DdbCall[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of calls) out[c.command] = (out[c.command] ?? 0) + 1;
  return out;
}

/** CPU seconds a process has used so far (Linux /proc; undefined elsewhere or for a process that is gone). */
export function procCpuSeconds(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    // fields 14 and 15 (utime, stime) follow the parenthesised command name, in clock ticks (100/s)
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return undefined;
  }
}

/**
 * The CPU seconds `fn` cost this process and the stack's DynamoDB Local: on a small
 * machine both share the cores, so a request path's cost shows here before its latency.
 */
export async function cpuDuring<T>(stack: RunningStack, fn: () => Promise<T>): Promise<{ value: T; nodeS: number; ddbS?: number }> {
  const pid = stack.ddb?.child.pid;
  const d0 = procCpuSeconds(pid);
  const n0 = process.cpuUsage();
  const value = await fn();
  const n = process.cpuUsage(n0);
  const d1 = procCpuSeconds(pid);
  return { value, nodeS: (n.user + n.system) / 1e6, ...(d0 !== undefined && d1 !== undefined ? { ddbS: d1 - d0 } : {}) };
}

// ------------------------------------------------------------------ reference servers

/** A reference server started by its launcher script (its own process group), until `stop()`. */
export interface ReferenceServer {
  url: string;
  stop(): void;
}

/**
 * Start a reference server (a ../shared/reference launcher) on `port` with a fixed hash
 * seed: the reference's set orders repeat from run to run (a differential run's
 * `--seed S --round K` replays what the full run saw). Wait for it as its API needs.
 */
export function startReference(script: string, port: number, env: Record<string, string> = {}): ReferenceServer {
  const child: ChildProcess = spawn(script, [String(port)], {
    stdio: ['ignore', 'ignore', 'ignore'],
    detached: true,
    env: { ...process.env, PYTHONHASHSEED: process.env.PYTHONHASHSEED ?? '1', ...env },
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop() {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        /* gone */
      }
    },
  };
}

/** Wait until `url` answers anything below 500 (a server starting up), at most `ms`. */
export async function waitForUp(url: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      if ((await fetch(url)).status < 500) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`${url} did not come up`);
    await new Promise((r) => setTimeout(r, 300));
  }
}
