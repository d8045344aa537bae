import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBaremetal, type BmApi } from './harness.js';

let api: BmApi;
beforeAll(async () => {
  api = await startBaremetal();
});
afterAll(async () => api.close());

describe('version documents', () => {
  it('serves / without negotiation and /v1 with the version headers', async () => {
    const root = await api.req('GET', '/', { version: null });
    expect(root.status).toBe(200);
    expect(root.json.default_version).toEqual({
      id: 'v1',
      links: [{ href: `${api.url}/v1/`, rel: 'self' }],
      status: 'CURRENT',
      min_version: '1.1',
      version: '1.80',
    });
    expect(root.headers.get('x-openstack-ironic-api-version')).toBeNull();
    expect(root.headers.get('openstack-request-id')).toMatch(/^req-/);
    // Python's json.dumps spacing, as Ironic writes it
    expect(root.text.startsWith('{"name": "OpenStack Ironic API", "description": ')).toBe(true);

    const v1 = await api.req('GET', '/v1', { version: '1.52' });
    expect(v1.status).toBe(200);
    expect(v1.headers.get('x-openstack-ironic-api-minimum-version')).toBe('1.1');
    expect(v1.headers.get('x-openstack-ironic-api-maximum-version')).toBe('1.80');
    expect(v1.headers.get('x-openstack-ironic-api-version')).toBe('1.52');
    expect(v1.json.allocations[0].href).toBe(`${api.url}/v1/allocations/`);
    expect((await api.req('GET', '/v1/', { version: '1.51' })).json.allocations).toBeUndefined();
  });

  it('defaults to the minimum, maps latest to the maximum', async () => {
    const none = await api.req('GET', '/v1/nodes', { version: null });
    expect(none.headers.get('x-openstack-ironic-api-version')).toBe('1.1');
    const latest = await api.req('GET', '/v1/nodes', { version: 'LATEST' });
    expect(latest.headers.get('x-openstack-ironic-api-version')).toBe('1.80');
  });
});

describe('negotiation failures', () => {
  it('406 outside the range, with min/max headers and a webob body', async () => {
    const r = await api.req('GET', '/v1/nodes', { version: '1.81' });
    expect(r.status).toBe(406);
    expect(r.headers.get('x-openstack-ironic-api-minimum-version')).toBe('1.1');
    expect(r.headers.get('x-openstack-ironic-api-maximum-version')).toBe('1.80');
    expect(JSON.parse(r.json.error_message)).toEqual({
      code: 406,
      title: 'Not Acceptable',
      description: 'Version 1.81 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.80].',
    });
    const two = await api.req('GET', '/v1/nodes', { version: '2.1' });
    expect(two.status).toBe(406);
    expect(two.fault).toContain('Mutually exclusive versions requested. Version 2.1 requested');
    const zero = await api.req('GET', '/v1/nodes', { version: '1.0' });
    expect(zero.status).toBe(406);
  });

  it('406 for a malformed version, without version headers', async () => {
    const r = await api.req('GET', '/v1/nodes', { version: 'abc' });
    expect(r.status).toBe(406);
    expect(r.fault).toBe('Invalid value for X-OpenStack-Ironic-API-Version header');
    expect(r.headers.get('x-openstack-ironic-api-maximum-version')).toBeNull();
  });

  it('the version document reports negotiation failures as API faults', async () => {
    const r = await api.req('GET', '/v1', { version: '1.99' });
    expect(r.status).toBe(406);
    expect(JSON.parse(r.json.error_message)).toMatchObject({ faultcode: 'Client', debuginfo: null });
    expect(r.headers.get('x-openstack-ironic-api-maximum-version')).toBe('1.80');
  });
});

describe('error bodies', () => {
  it('unknown paths are 404 and wrong methods 405 with Allow, both webob-shaped', async () => {
    const nf = await api.req('GET', '/v1/nosuch');
    expect(nf.status).toBe(404);
    expect(JSON.parse(nf.json.error_message)).toEqual({ code: 404, title: 'Not Found', description: '' });
    expect(nf.headers.get('x-openstack-ironic-api-version')).toBeNull();
    const na = await api.req('PUT', '/v1/allocations', { body: {} });
    expect(na.status).toBe(405);
    expect(na.headers.get('allow')).toBe('GET, POST');
    expect(JSON.parse(na.json.error_message).title).toBe('Method Not Allowed');
  });

  it('API faults carry faultcode/faultstring/debuginfo, version headers and the request id', async () => {
    const r = await api.req('GET', '/v1/nodes/nope');
    expect(r.status).toBe(404);
    expect(r.text).toBe(
      '{"error_message": "{\\"faultcode\\": \\"Client\\", \\"faultstring\\": \\"Node nope could not be found.\\", \\"debuginfo\\": null}"}',
    );
    expect(r.headers.get('x-openstack-ironic-api-version')).toBe('1.80');
    expect(r.headers.get('openstack-request-id')).toMatch(/^req-/);
  });

  it('a malformed body is a 400, never a 500', async () => {
    for (const path of ['/v1/nodes', '/v1/allocations']) {
      const r = await api.req('POST', path, { raw: '{"driver": ' });
      expect(r.status).toBe(400);
      expect(r.fault).toMatch(/^Malformed JSON in request body/);
    }
    const arr = await api.req('POST', '/v1/allocations', { raw: '[1]' });
    expect(arr.status).toBe(400);
    expect(arr.fault).toBe("Schema error for allocation: [1] is not of type 'object'");
    const nul = await api.req('POST', '/v1/allocations', { raw: 'null' });
    expect(nul.status).toBe(400);
    const patch = await api.req('PATCH', '/v1/allocations/x', { raw: '{"op": "x"}' });
    expect(patch.status).toBe(400);
    expect(patch.fault).toBe("Schema error for patch: {'op': 'x'} is not of type 'array'");
  });

  it('unknown query parameters are refused like Ironic does', async () => {
    const r = await api.req('GET', '/v1/allocations?foo=1');
    expect(r.status).toBe(400);
    expect(r.fault).toBe('Unexpected arguments: foo');
  });
});
