import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlacement, type Api } from '../harness.js';

let api: Api;
beforeAll(async () => {
  api = await startPlacement({ PLACEMENT_POLICY_MODE: 'default' });
});
afterAll(async () => api.close());

describe('Placement HTTP conventions through the local API Gateway adapter', () => {
  it('serves the version document without a token, with microversion headers', async () => {
    const r = await api.req('GET', '/', { token: '', version: '1.39' });
    expect(r.status).toBe(200);
    expect(r.json.versions[0]).toMatchObject({ id: 'v1.0', min_version: '1.0', max_version: '1.39', status: 'CURRENT' });
    expect(r.headers.get('openstack-api-version')).toBe('placement 1.39');
    expect(r.headers.get('vary')).toContain('openstack-api-version');
    expect(r.headers.get('cache-control')).toBe('no-cache');
    expect(r.headers.get('last-modified')).toMatch(/GMT$/);
  });

  it('puts a request id on every response, errors included', async () => {
    for (const [m, p] of [
      ['GET', '/'],
      ['GET', '/nowhere'],
      ['DELETE', '/'],
    ] as const) {
      const r = await api.req(m, p);
      expect(r.headers.get('openstack-request-id')).toMatch(/^req-[0-9a-f-]{36}$/);
      expect(r.headers.get('x-openstack-request-id')).toBe(r.headers.get('openstack-request-id'));
    }
    const r = await api.req('GET', '/nowhere', { version: '1.23' });
    expect(r.json.errors[0]).toMatchObject({ status: 404, title: 'Not Found', code: 'placement.undefined_code' });
    expect(r.json.errors[0].request_id).toBe(r.headers.get('openstack-request-id'));
  });

  it('needs a token outside the root', async () => {
    const r = await api.req('GET', '/resource_providers', { token: '' });
    expect(r.status).toBe(401);
  });

  it('answers 405 with an Allow header in declaration order', async () => {
    const r = await api.req('DELETE', '/resource_providers');
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('GET, POST');
    expect(r.json.errors[0].detail).toContain('The method DELETE is not allowed for this resource.');
  });

  it('negotiates microversions: 406 out of range, 400 malformed, both in the envelope', async () => {
    const a = await api.req('GET', '/', { version: '1.40' });
    expect(a.status).toBe(406);
    expect(a.json.errors[0]).toMatchObject({ title: 'Not Acceptable', max_version: '1.39', min_version: '1.0' });
    const b = await api.req('GET', '/', { version: 'pony.horse' });
    expect(b.status).toBe(400);
    expect(b.json.errors[0].detail).toContain('invalid version string: pony.horse');
  });

  it('refuses non-JSON bodies with 415 and malformed JSON with 400, changing nothing', async () => {
    const a = await api.req('POST', '/resource_providers', { raw: 'name=x', headers: { 'content-type': 'text/plain' } });
    expect(a.status).toBe(415);
    const b = await api.req('POST', '/resource_providers', { raw: '{"name": ' });
    expect(b.status).toBe(400);
    expect(b.json.errors[0].detail).toContain('Malformed JSON');
    const c = await api.req('POST', '/resource_providers', { body: { name: 'x', color: 'blue' } });
    expect(c.status).toBe(400);
    expect(c.json.errors[0].detail).toContain("Additional properties are not allowed ('color' was unexpected)");
    const list = await api.req('GET', '/resource_providers');
    expect(list.json.resource_providers).toEqual([]);
  });

  it('checks Accept on reads', async () => {
    const r = await api.req('GET', '/resource_providers', { headers: { accept: 'text/plain' } });
    expect(r.status).toBe(406);
    expect(r.text).toContain('Only application/json is provided');
  });
});

describe('request size limits', () => {
  it('refuses oversized bodies (413) and query strings (414) in Placement’s envelope, changing nothing', async () => {
    const big = await api.req('POST', '/resource_providers', { raw: JSON.stringify({ name: 'x'.repeat(5 * 1024 * 1024) }) });
    expect(big.status).toBe(413);
    expect(big.json.errors[0].title).toBe('Request Entity Too Large');
    const long = await api.req('GET', `/resource_providers?name=${'y'.repeat(9_000)}`);
    expect(long.status).toBe(414);
    expect((await api.req('GET', '/resource_providers?name=' + 'x'.repeat(10))).json.resource_providers).toEqual([]);
  });
});

describe('body encoding', () => {
  it('answers 400 Malformed JSON for a body that is not UTF-8', async () => {
    const r = await fetch(`${api.url}/resource_providers`, {
      method: 'POST',
      headers: { 'x-auth-token': 'admin', 'content-type': 'application/json', 'openstack-api-version': 'placement latest' },
      body: Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { errors: Array<{ detail: string }> }).errors[0]!.detail).toContain('Malformed JSON');
  });
});
