/**
 * Bad input to the bare-metal API, case by case: Ironic's own 400 / 404 / 406 / 413
 * (error_message documents), and the table unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBaremetal, type BmApi } from '../baremetal/harness.js';
import { send, tableState } from '../../fuzz/harness.js';

let api: BmApi;
let node: string;
beforeAll(async () => {
  api = await startBaremetal();
  const n = await api.req('POST', '/v1/nodes', { body: { driver: 'fake-hardware', name: 'hard-node', resource_class: 'hard-rc' } });
  expect(n.status).toBe(201);
  node = n.json.uuid;
  await api.settle();
});
afterAll(async () => api.close());

const state = () => tableState(process.env.DDB_ENDPOINT!, process.env.TABLE_NAME!);

async function refused(method: string, path: string, raw: string | Buffer | undefined, status: number, fault?: RegExp) {
  await api.settle();
  const before = await state();
  const res = await send(api.url, {
    method,
    path,
    headers: { 'x-openstack-ironic-api-version': '1.80', 'content-type': 'application/json' },
    body: raw === undefined ? undefined : Buffer.isBuffer(raw) ? raw : Buffer.from(raw),
  });
  expect(res.status, `${method} ${path.slice(0, 80)} ${String(raw).slice(0, 120)}: ${res.text.slice(0, 300)}`).toBe(status);
  const body = JSON.parse(res.text);
  expect(typeof body.error_message).toBe('string');
  if (fault) expect(body.error_message).toMatch(fault);
  await api.settle();
  expect(await state(), 'the table changed').toBe(before);
}

describe('bare-metal bad input', () => {
  it('malformed, mistyped, forged-unicode and deeply nested bodies are 400', async () => {
    await refused('POST', '/v1/nodes', '{"driver": ', 400, /Malformed JSON/);
    await refused('POST', '/v1/nodes', 'null', 400, /Schema error for node/);
    await refused('POST', '/v1/nodes', '{"driver": 5}', 400, /Schema error/);
    await refused('POST', '/v1/nodes', '{"name": "no-driver"}', 400, /driver/);
    await refused('POST', '/v1/nodes', '{"driver": "fake-hardware", "uuid": "not-a-uuid"}', 400, /Expected UUID/);
    await refused('POST', '/v1/nodes', '{"driver": "fake-hardware", "name": "\\udc00"}', 400, /unpaired surrogate/);
    await refused('POST', '/v1/nodes', `{"driver": "fake-hardware", "extra": ${'{"a":'.repeat(100)}1${'}'.repeat(100)}}`, 400, /nested deeper/);
    await refused('POST', '/v1/allocations', '{"resource_class": "hard-rc", "traits": ["lowercase"]}', 400);
    await refused('POST', '/v1/allocations', '{"resource_class": 7}', 400);
  });
  it('bad JSON patches are 400 and change nothing', async () => {
    await refused('PATCH', `/v1/nodes/${node}`, '[{"op": "bogus", "path": "/name", "value": "x"}]', 400);
    await refused('PATCH', `/v1/nodes/${node}`, '[{"op": "replace", "path": "/uuid", "value": "x"}]', 400);
    await refused('PATCH', `/v1/nodes/${node}`, '{"op": "replace"}', 400);
    await refused('PATCH', `/v1/nodes/${node}`, '[{"op": "replace", "path": "/name", "value": "\\ud83d"}]', 400, /unpaired surrogate/);
  });
  it('bad query arguments and idents are 400, unknown ones 404', async () => {
    await refused('GET', '/v1/nodes?limit=-1', undefined, 400);
    await refused('GET', '/v1/nodes?limit=abc', undefined, 400);
    await refused('GET', '/v1/nodes?sort_key=password', undefined, 400);
    await refused('GET', '/v1/nodes?marker=not-a-uuid', undefined, 400);
    await refused('GET', '/v1/nodes?name=%FF', undefined, 400);
    await refused('GET', `/v1/nodes/${'a'.repeat(3000)}`, undefined, 400, /Expected UUID or name/);
    await refused('DELETE', `/v1/allocations/${'b'.repeat(3000)}`, undefined, 400, /Expected UUID or name/);
    await refused('GET', '/v1/allocations/0f2a4c47-5d5e-4f7c-9a51-6a6a26f0a0aa', undefined, 404);
  });
  it('prototype keys (__proto__) anywhere in a body are bad input: 400, nothing stored', async () => {
    const proto = '{"__proto__": {"polluted": true}}';
    await refused('POST', '/v1/nodes', `{"driver": "fake-hardware", "extra": ${proto}}`, 400, /__proto__/);
    await refused('POST', '/v1/nodes', `{"driver": "fake-hardware", "properties": ${proto}}`, 400, /__proto__/);
    await refused('POST', '/v1/nodes', `{"driver": "fake-hardware", "__proto__": {"name": "x"}}`, 400, /__proto__/);
    await refused('POST', '/v1/allocations', `{"resource_class": "hard-rc", "extra": ${proto}}`, 400, /__proto__/);
    await refused('PATCH', `/v1/nodes/${node}`, `[{"op": "add", "path": "/extra", "value": ${proto}}]`, 400, /__proto__/);
    await refused('PATCH', `/v1/nodes/${node}`, `[{"op": "add", "path": "/properties", "value": {"a": ${proto}}}]`, 400, /__proto__/);
    await refused('PATCH', `/v1/nodes/${node}`, '[{"op": "add", "path": "/extra/__proto__", "value": {"x": 1}}]', 400, /__proto__/);
    await refused('PATCH', `/v1/nodes/${node}`, '[{"op": "add", "path": "/properties/__proto__/x", "value": 1}]', 400, /__proto__/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // "constructor" makes an object a class instance to the DynamoDB marshaller (it was a 500)
    await refused('POST', '/v1/nodes', '{"driver": "fake-hardware", "extra": {"constructor": 1}}', 400, /constructor/);
    await refused('POST', '/v1/nodes', '{"driver": "fake-hardware", "properties": {"constructor": {"a": 1}}}', 400, /constructor/);
    await refused('PATCH', `/v1/nodes/${node}`, '[{"op": "add", "path": "/extra/constructor", "value": 1}]', 400, /constructor/);
    // other names of Object.prototype are plain data
    const ok = await api.req('PATCH', `/v1/nodes/${node}`, { body: [{ op: 'add', path: '/extra/toString', value: 1 }] });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.extra).toEqual({ toString: 1 });
  });
  it('a body over the limit is 413', async () => {
    await refused('POST', '/v1/nodes', `{"driver": "fake-hardware", "description": "${'x'.repeat(5 * 1024 * 1024)}"}`, 413);
  });
});
