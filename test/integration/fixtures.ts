/**
 * Test fixtures shared by the integration suites: objects created through the real
 * API (so every fixture goes through the same handlers and conditions as a client).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { Api } from './harness.js';

export type Inventories = Record<string, Record<string, number>>;

export interface ProviderSpec {
  /** default: rp-<uuid> */
  name?: string;
  uuid?: string;
  parent?: string;
  inventories?: Inventories;
  traits?: string[];
  aggregates?: string[];
}

/** A resource provider, then (each only if given) its inventories, traits and aggregates; returns its uuid. */
export async function createProvider(api: Api, spec: ProviderSpec = {}): Promise<string> {
  const uuid = spec.uuid ?? randomUUID();
  const body = { name: spec.name ?? `rp-${uuid}`, uuid, ...(spec.parent ? { parent_provider_uuid: spec.parent } : {}) };
  const c = await api.req('POST', '/resource_providers', { body });
  expect(c.status, c.text).toBe(200);
  let generation = 0;
  const put = async (what: string, payload: Record<string, unknown>) => {
    const r = await api.req('PUT', `/resource_providers/${uuid}/${what}`, { body: { resource_provider_generation: generation, ...payload } });
    expect(r.status, r.text).toBe(200);
    generation = r.json.resource_provider_generation;
  };
  if (spec.inventories && Object.keys(spec.inventories).length) await put('inventories', { inventories: spec.inventories });
  if (spec.traits) await put('traits', { traits: spec.traits });
  if (spec.aggregates) await put('aggregates', { aggregates: spec.aggregates });
  return uuid;
}

export interface BulkTree {
  root: { uuid: string; name: string };
  children: { uuid: string; name: string }[];
  aggregate?: string;
}

/**
 * A large cloud, fast: `trees` compute-node-like trees written with the store's bulk
 * loader (BatchWriteItem, as `berth load` and bench/ do; the API's handlers read them
 * like any other provider). Root i is `${prefix}-${i}` (zero-padded to 5 digits) with
 * DISK_GB, trait HW_CPU_X86_AVX2 and aggregate `aggregates[i % aggregates.length]`;
 * its children `${root}-numa${k}` hold VCPU and MEMORY_MB. Standard names only.
 */
export async function bulkTrees(opts: { trees: number; children: number; aggregates: string[]; prefix?: string }): Promise<BulkTree[]> {
  const { bulkLoadProviders } = await import('../../functions/store/placement/bulk.js');
  const prefix = opts.prefix ?? 'host';
  const trees: BulkTree[] = [];
  const input: Parameters<typeof bulkLoadProviders>[0] = [];
  for (let i = 0; i < opts.trees; i++) {
    const name = `${prefix}-${String(i).padStart(5, '0')}`;
    const aggregate = opts.aggregates.length ? opts.aggregates[i % opts.aggregates.length] : undefined;
    const root = { uuid: randomUUID(), name };
    input.push({
      ...root,
      inventories: { DISK_GB: { total: 2000, reserved: 100 } },
      traits: ['HW_CPU_X86_AVX2'],
      aggregates: aggregate ? [aggregate] : [],
    });
    const children = Array.from({ length: opts.children }, (_, k) => ({ uuid: randomUUID(), name: `${name}-numa${k}` }));
    for (const c of children) input.push({ ...c, parent: root.uuid, inventories: { VCPU: { total: 32 }, MEMORY_MB: { total: 131072 } } });
    trees.push({ root, children, aggregate });
  }
  const r = await bulkLoadProviders(input);
  expect(r.providers).toBe(input.length);
  // as berth load does: running snapshots catch up from this image, not provider by provider
  const { imageAfterBulkLoad } = await import('../../functions/store/placement/bulk-image.js');
  await imageAfterBulkLoad(r);
  return trees;
}
