/**
 * Bare-metal integration harness: a fresh table in the shared DynamoDB Local, the real
 * bare-metal handlers behind the real local HTTP adapter (local/apis.ts) on a random
 * port, the state machines run from their ASL files by the local runner, and a client
 * that speaks Ironic's headers.
 */
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { StoredAllocation } from '../../../functions/store/baremetal/allocations.js';
import { useTable } from '../harness.js';
import type { LocalRunner } from '../../../local/state-machines.js';
import { closeServers } from '../../../local/servers.js';

export const LATEST = '1.80';

export interface BmRes {
  status: number;
  headers: Headers;
  text: string;
  json: any;
  /** the faultstring of an Ironic error body */
  fault?: string;
}

export interface BmApi {
  url: string;
  runner: LocalRunner;
  req(
    method: string,
    path: string,
    opts?: { body?: unknown; raw?: string; headers?: Record<string, string>; version?: string | null },
  ): Promise<BmRes>;
  /** wait until every state-machine execution started so far has ended */
  settle(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The bare-metal API of the running test file (the shared agreement check settles it and
 * reads its table after every test: test/setup/baremetal-agreement.ts).
 */
export const activeBaremetal: { api?: BmApi; table?: string } = {};

/**
 * A table switched to the placement scheduler is migrated before it is used, as
 * `npm start` and `npx berth migrate-baremetal` do (a fresh one at once). The scheduler
 * comes from the environment (BAREMETAL_SCHEDULER: `npm test` runs the bare-metal
 * suites with both) unless `env` names one.
 */
export async function useBaremetalTable(env: Record<string, string> = {}): Promise<string> {
  const table = await useTable({ BAREMETAL_INDEX_RETRIES: '0', ...env });
  const { forgetSchedulerState, migrateNodesToPlacement } = await import('../../../functions/bridge/migration.js');
  forgetSchedulerState();
  await migrateNodesToPlacement({ deadline: Number.POSITIVE_INFINITY });
  activeBaremetal.table = table;
  return table;
}

export async function startBaremetal(env: Record<string, string> = {}): Promise<BmApi> {
  await useBaremetalTable(env);
  const { serveBaremetal } = await import('../../../local/apis.js');
  const { localRunner } = await import('../../../local/state-machines.js');
  const server: Server = await serveBaremetal(0);
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const runner = localRunner();
  const api: BmApi = {
    url,
    runner,
    async req(method, path, opts = {}) {
      const headers: Record<string, string> = {
        ...(opts.version === null ? {} : { 'x-openstack-ironic-api-version': opts.version ?? LATEST }),
        ...(opts.body !== undefined || opts.raw !== undefined ? { 'content-type': 'application/json' } : {}),
        ...opts.headers,
      };
      const r = await fetch(url + path, {
        method,
        headers,
        body: opts.raw ?? (opts.body !== undefined ? JSON.stringify(opts.body) : undefined),
      });
      const text = await r.text();
      let json: any;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      let fault: string | undefined;
      if (json?.error_message) {
        try {
          const inner = JSON.parse(json.error_message);
          fault = inner.faultstring ?? inner.description;
        } catch {
          fault = json.error_message;
        }
      }
      return { status: r.status, headers: r.headers, text, json, fault };
    },
    settle: () => runner.idle(),
    async close() {
      await runner.idle();
      await closeServers([server]);
    },
  };
  activeBaremetal.api = api;
  return api;
}

/** Poll until `check` returns a value (not undefined), or fail after `ms`. */
export async function waitFor<T>(check: () => Promise<T | undefined>, ms = 20_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** An allocatable node: created, managed, provided, powered off (all through the API). */
export async function availableNode(
  api: BmApi,
  body: Record<string, unknown> = {},
  opts: { traits?: string[]; power?: boolean; headers?: Record<string, string> } = {},
): Promise<{ uuid: string; name: string | null }> {
  const c = await api.req('POST', '/v1/nodes', { body: { driver: 'fake-hardware', resource_class: 'baremetal', ...body }, headers: opts.headers });
  if (c.status !== 201) throw new Error(`node create failed: ${c.status} ${c.text}`);
  const uuid = c.json.uuid as string;
  for (const target of ['manage', 'provide']) {
    const p = await api.req('PUT', `/v1/nodes/${uuid}/states/provision`, { body: { target } });
    if (p.status !== 202) throw new Error(`${target} failed: ${p.status} ${p.text}`);
    await api.settle();
  }
  if (opts.power !== false) {
    const p = await api.req('PUT', `/v1/nodes/${uuid}/states/power`, { body: { target: 'power off' } });
    if (p.status !== 202) throw new Error(`power failed: ${p.status} ${p.text}`);
    // fake power lands with the 202; a slowed fake driver would hold the node's lock until its action ran
    await api.settle();
  }
  if (opts.traits?.length) {
    const t = await api.req('PUT', `/v1/nodes/${uuid}/traits`, { body: { traits: opts.traits } });
    if (t.status !== 204) throw new Error(`traits failed: ${t.status} ${t.text}`);
  }
  await api.settle();
  return { uuid, name: (c.json.name as string | null) ?? null };
}

/** Create an allocation and wait until its execution has ended; returns the final allocation. */
export async function allocate(api: BmApi, body: Record<string, unknown>, version?: string): Promise<any> {
  const c = await api.req('POST', '/v1/allocations', { body, version });
  if (c.status !== 201) throw new Error(`allocation create failed: ${c.status} ${c.text}`);
  await api.settle();
  const g = await api.req('GET', `/v1/allocations/${c.json.uuid}`, { version });
  return g.json;
}

/** An allocation record as the API stores a new one (allocating, no execution yet), for the steps driven by hand. */
export async function allocatingRecord(rc: string, over: Partial<StoredAllocation> = {}): Promise<StoredAllocation> {
  const { nextBmSeq } = await import('../../../functions/store/baremetal/keys.js');
  return {
    uuid: randomUUID(),
    name: null,
    resource_class: rc,
    traits: [],
    candidate_nodes: [],
    extra: {},
    owner: null,
    state: 'allocating',
    last_error: null,
    node_uuid: null,
    created_at: new Date().toISOString(),
    updated_at: null,
    exec: null,
    exec_at: Date.now(),
    seq: nextBmSeq(),
    ver: 0,
    ...over,
  };
}
