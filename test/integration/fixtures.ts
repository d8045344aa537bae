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
