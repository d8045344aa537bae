/**
 * `large`: requests Placement accepts that are larger than one DynamoDB transaction
 * (functions/store/ddb/intents/), timed on Berth and — side by side, in the same run —
 * on the real Placement 8.0.0 (../shared/reference/serve-placement.sh, SQLite), when its
 * Debian package is installed: a compute host's reshape (60 / 300 / 500 instances), new
 * aggregates (150 / 1,000) and custom traits (120 / 300) on one provider, a consumer on
 * 60 / 120 providers, POST /allocations with 150 / 200 consumers, a subtree of 500 providers
 * re-parented; and one ordinary claim (the single-transaction path) for scale.
 * `--large-sizes small` runs only the smaller size of each.
 */
import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { VALUE, sharedPath, startReference, waitForUp, type BenchContext, type ReferenceServer, type Scenario } from '../kit.js';
import { freePort } from '../../local/ddb-local.js';

const REFERENCE = sharedPath('reference', 'serve-placement.sh');
const V = '1.38';

interface Target {
  label: string;
  url: string;
}

async function req(t: Target, method: string, path: string, body?: unknown, version = V): Promise<{ status: number; ms: number; text: string }> {
  const t0 = performance.now();
  const r = await fetch(`${t.url}${path}`, {
    method,
    headers: {
      'x-auth-token': 'admin',
      'openstack-api-version': `placement ${version}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, ms: performance.now() - t0, text };
}

async function ok(t: Target, method: string, path: string, body?: unknown, version = V) {
  const r = await req(t, method, path, body, version);
  if (r.status >= 300) throw new Error(`${t.label} ${method} ${path}: ${r.status} ${r.text.slice(0, 300)}`);
  return r;
}

async function provider(t: Target, inventories?: Record<string, { total: number }>, parent?: string): Promise<string> {
  const u = randomUUID();
  await ok(t, 'POST', '/resource_providers', { name: `lg-${u}`, uuid: u, ...(parent ? { parent_provider_uuid: parent } : {}) });
  if (inventories) await ok(t, 'PUT', `/resource_providers/${u}/inventories`, { resource_provider_generation: 0, inventories });
  return u;
}

const owner = { project_id: 'bench-large', user_id: 'u', consumer_type: 'INSTANCE' };

async function consumersOn(t: Target, rp: string, n: number): Promise<string[]> {
  const all = Array.from({ length: n }, () => randomUUID());
  for (let i = 0; i < n; i += 50) {
    await ok(
      t,
      'POST',
      '/allocations',
      Object.fromEntries(
        all.slice(i, i + 50).map((c) => [c, { allocations: { [rp]: { resources: { VCPU: 1 } } }, ...owner, consumer_generation: null }]),
      ),
    );
  }
  return all;
}

/** one case: set up (untimed), then the timed request; returns ms */
type Case = { key: string; run: (t: Target) => Promise<number> };

function cases(small: boolean): Case[] {
  const pick = (sizes: number[]) => (small ? sizes.slice(0, 1) : sizes);
  const out: Case[] = [
    {
      key: 'claim/1-provider',
      run: async (t) => {
        const rp = await provider(t, { VCPU: { total: 8 } });
        const r = await ok(t, 'PUT', `/allocations/${randomUUID()}`, {
          allocations: { [rp]: { resources: { VCPU: 1 } } },
          ...owner,
          consumer_generation: null,
        });
        return r.ms;
      },
    },
  ];
  for (const n of pick([60, 300, 500])) {
    out.push({
      key: `reshape/${n}-instances`,
      run: async (t) => {
        const root = await provider(t, { VCPU: { total: 1000 } });
        const consumers = await consumersOn(t, root, n);
        const child = await provider(t, undefined, root);
        const gen = JSON.parse((await ok(t, 'GET', `/resource_providers/${root}`)).text).generation;
        const r = await ok(t, 'POST', '/reshaper', {
          inventories: {
            [root]: { resource_provider_generation: gen, inventories: {} },
            [child]: { resource_provider_generation: 0, inventories: { VCPU: { total: 1000 } } },
          },
          allocations: Object.fromEntries(
            consumers.map((c) => [c, { allocations: { [child]: { resources: { VCPU: 1 } } }, ...owner, consumer_generation: 1 }]),
          ),
        });
        return r.ms;
      },
    });
  }
  for (const n of pick([150, 1000])) {
    out.push({
      key: `aggregates/${n}`,
      run: async (t) => {
        const rp = await provider(t);
        const r = await ok(
          t,
          'PUT',
          `/resource_providers/${rp}/aggregates`,
          { aggregates: Array.from({ length: n }, () => randomUUID()), resource_provider_generation: 0 },
          '1.19',
        );
        return r.ms;
      },
    });
  }
  for (const n of pick([120, 300])) {
    out.push({
      key: `traits/${n}-custom`,
      run: async (t) => {
        const tag = randomUUID().slice(0, 8).toUpperCase();
        const names = Array.from({ length: n }, (_, i) => `CUSTOM_LG_${tag}_${i}`);
        for (const name of names) await ok(t, 'PUT', `/traits/${name}`);
        const rp = await provider(t);
        const r = await ok(t, 'PUT', `/resource_providers/${rp}/traits`, { traits: names, resource_provider_generation: 0 });
        return r.ms;
      },
    });
  }
  for (const n of pick([60, 120])) {
    out.push({
      key: `consumer/${n}-providers`,
      run: async (t) => {
        const rps: string[] = [];
        for (let i = 0; i < n; i++) rps.push(await provider(t, { VCPU: { total: 4 } }));
        const r = await ok(t, 'PUT', `/allocations/${randomUUID()}`, {
          allocations: Object.fromEntries(rps.map((rp) => [rp, { resources: { VCPU: 1 } }])),
          ...owner,
          consumer_generation: null,
        });
        return r.ms;
      },
    });
  }
  for (const n of pick([150, 200])) {
    out.push({
      key: `post-allocations/${n}-consumers`,
      run: async (t) => {
        const rp = await provider(t, { VCPU: { total: 1000 } });
        const r = await ok(
          t,
          'POST',
          '/allocations',
          Object.fromEntries(
            Array.from({ length: n }, () => [
              randomUUID(),
              { allocations: { [rp]: { resources: { VCPU: 1 } } }, ...owner, consumer_generation: null },
            ]),
          ),
        );
        return r.ms;
      },
    });
  }
  out.push({
    key: 'reparent/500-providers',
    run: async (t) => {
      const a = await provider(t);
      const b = await provider(t);
      const x = await provider(t, undefined, a);
      const below: string[] = [];
      for (let i = 0; i < 499; i++) below.push(await provider(t, undefined, i < 20 ? x : below[i % 20]!));
      const r = await ok(t, 'PUT', `/resource_providers/${x}`, { name: `lg-${x}`, parent_provider_uuid: b }, '1.37');
      return r.ms;
    },
  });
  return out;
}

async function startRef(): Promise<{ target: Target; server: ReferenceServer } | undefined> {
  if (!existsSync(REFERENCE) || !existsSync('/usr/lib/python3/dist-packages/placement')) return undefined;
  const server = startReference(REFERENCE, await freePort());
  try {
    await waitForUp(server.url, 60_000);
  } catch (e) {
    server.stop();
    throw e;
  }
  return { target: { label: 'placement-8.0.0', url: server.url }, server };
}

export const largeScenario: Scenario = {
  name: 'large',
  options: { 'large-sizes': VALUE },
  description: 'requests larger than one DynamoDB transaction, side by side with Placement 8.0.0',
  async run(ctx: BenchContext) {
    const berth: Target = { label: 'berth', url: ctx.stack.placementUrl };
    const ref = await startRef();
    if (!ref) ctx.say('the real Placement (Debian python3-placement) is not installed: Berth alone');
    try {
      const targets = [berth, ...(ref ? [ref.target] : [])];
      for (const c of cases(ctx.quick || ctx.args['large-sizes'] === 'small')) {
        const ms: Record<string, number> = {};
        for (const t of targets) ms[t.label] = Math.round(await c.run(t));
        ctx.emit({
          kind: 'latency',
          key: `large/${c.key}`,
          ms,
          headline: { berth_ms: ms.berth, ...(ref ? { placement_ms: ms[ref.target.label] } : {}) },
        });
        ctx.say(`${c.key.padEnd(30)} ${targets.map((t) => `${t.label} ${ms[t.label]} ms`).join('   ')}`);
      }
    } finally {
      ref?.server.stop();
    }
  },
};
