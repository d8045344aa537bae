/**
 * Lambda's 6 MB answer limit, as AWS applies it, through the real handlers and the
 * local adapter: answers are compressed for clients that accept gzip, and an answer that
 * cannot fit is the API's own error saying how to narrow the request (never a 502,
 * never a truncated body). The limit is lowered here so a few hundred items reach it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetConfig } from '../../../functions/config.js';
import { startBaremetal, type BmApi } from '../baremetal/harness.js';
import { createProvider } from '../fixtures.js';
import { startPlacement, type Api } from '../harness.js';

const LIMIT = '24000';

describe('Placement answers within the response limit', () => {
  let api: Api;
  beforeAll(async () => {
    api = await startPlacement({ MAX_RESPONSE_BYTES: LIMIT });
    for (let i = 0; i < 150; i++) await createProvider(api);
  });
  afterAll(async () => {
    await api.close();
    delete process.env.MAX_RESPONSE_BYTES;
    resetConfig();
  });

  it('sends a large list compressed to a client that accepts gzip', async () => {
    const r = await api.req('GET', '/resource_providers', { headers: { 'accept-encoding': 'gzip, deflate' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-encoding')).toBe('gzip');
    expect(r.headers.get('vary')).toMatch(/openstack-api-version/);
    expect(r.json.resource_providers).toHaveLength(150);
  });

  it('answers a client without gzip with Placement error that says how to narrow the request', async () => {
    const r = await api.req('GET', '/resource_providers', { headers: { 'accept-encoding': 'identity' } });
    expect(r.status).toBe(400);
    expect(r.headers.get('content-encoding')).toBeNull();
    expect(r.headers.get('openstack-api-version')).toBe('placement 1.39');
    const e = r.json.errors[0];
    expect(e.code).toBe('placement.undefined_code');
    expect(e.detail).toContain('does not fit uncompressed (send Accept-Encoding: gzip to receive it compressed)');
    expect(e.detail).toMatch(/member_of, in_tree/);
    expect(e.request_id).toMatch(/^req-/);
  });

  it('keeps answering what fits: a narrowed list needs no compression', async () => {
    const all = (await api.req('GET', '/resource_providers', { headers: { 'accept-encoding': 'gzip' } })).json.resource_providers;
    const one = await api.req('GET', `/resource_providers?uuid=${all[0].uuid}`, { headers: { 'accept-encoding': 'identity' } });
    expect(one.status).toBe(200);
    expect(one.json.resource_providers).toHaveLength(1);
  });
});

describe('bare-metal answers within the response limit', () => {
  let bm: BmApi;
  beforeAll(async () => {
    bm = await startBaremetal({ MAX_RESPONSE_BYTES: '6000' });
    for (let i = 0; i < 12; i++) {
      const c = await bm.req('POST', '/v1/nodes', { body: { driver: 'fake-hardware', name: `big-${i}`, resource_class: 'baremetal' } });
      expect(c.status).toBe(201);
    }
  });
  afterAll(async () => {
    await bm.close();
    delete process.env.MAX_RESPONSE_BYTES;
    resetConfig();
  });

  it('compresses for gzip clients and refuses the rest with an Ironic fault naming limit and marker', async () => {
    const ok = await bm.req('GET', '/v1/nodes/detail', { headers: { 'accept-encoding': 'gzip' } });
    expect(ok.status).toBe(200);
    expect(ok.json.nodes).toHaveLength(12);
    const refused = await bm.req('GET', '/v1/nodes/detail', { headers: { 'accept-encoding': 'identity' } });
    expect(refused.status).toBe(400);
    expect(refused.fault).toMatch(/in pages with limit and marker/);
  });
});

describe('candidates too large to render', () => {
  let api: Api;
  beforeAll(async () => {
    api = await startPlacement({ MAX_RESPONSE_BYTES: '2000' });
    for (let i = 0; i < 170; i++) await createProvider(api, { inventories: { VCPU: { total: 8 } } });
  });
  afterAll(async () => {
    await api.close();
    delete process.env.MAX_RESPONSE_BYTES;
    resetConfig();
  });

  it('refuses an unlimited answer that could not be sent before rendering it, and points at limit', async () => {
    const r = await api.req('GET', '/allocation_candidates?resources=VCPU:1', { headers: { 'accept-encoding': 'gzip' } });
    expect(r.status).toBe(400);
    expect(r.json.errors[0].detail).toMatch(/is at least .* MB .*limit \(Nova asks for 1000\)/s);
    const few = await api.req('GET', '/allocation_candidates?resources=VCPU:1&limit=2', { headers: { 'accept-encoding': 'gzip' } });
    expect(few.status).toBe(200);
    expect(few.json.allocation_requests).toHaveLength(2);
  });
});

describe('provider lists too large to render', () => {
  let api: Api;
  beforeAll(async () => {
    api = await startPlacement({ MAX_RESPONSE_BYTES: '4000' });
    const { bulkLoadProviders } = await import('../../../functions/store/placement/bulk.js');
    await bulkLoadProviders(Array.from({ length: 400 }, (_, i) => ({ uuid: randomUUID(), name: `many-${i}` })));
  });
  afterAll(async () => {
    await api.close();
    delete process.env.MAX_RESPONSE_BYTES;
    resetConfig();
  });

  it('refuses a list that could not be sent before rendering it, and says how to narrow it', async () => {
    const r = await api.req('GET', '/resource_providers', { headers: { 'accept-encoding': 'gzip' }, version: '1.0' });
    expect(r.status).toBe(400);
    expect(r.json.errors[0].detail).toMatch(/is at least .* MB .*member_of, in_tree/s);
    const one = (await api.req('GET', '/resource_providers?name=nope', { headers: { 'accept-encoding': 'gzip' } })).status;
    expect(one).toBe(200);
  });
});
