/**
 * Bad input, case by case (the fuzz suites cover the same ground at random): integers
 * at and past Placement's 2147483647 and JSON's 2^53, negative and fractional amounts,
 * query keys Placement forbids repeating, oversized bodies and query strings, invalid
 * UUIDs, malformed and mistyped JSON, invalid UTF-8. Each is refused with the API's
 * own 4xx and the table is byte-for-byte unchanged; the boundary values that are valid
 * are accepted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startPlacement, type Api } from '../harness.js';
import { send, tableState } from '../../fuzz/harness.js';

let api: Api;
let rp: string;
const consumer = randomUUID();

beforeAll(async () => {
  api = await startPlacement({ PLACEMENT_POLICY_MODE: 'default' });
  rp = randomUUID();
  expect((await api.req('POST', '/resource_providers', { body: { name: `h-${rp}`, uuid: rp } })).status).toBe(200);
  expect(
    (
      await api.req('PUT', `/resource_providers/${rp}/inventories`, {
        body: { resource_provider_generation: 0, inventories: { VCPU: { total: 16 } } },
      })
    ).status,
  ).toBe(200);
});
afterAll(async () => api.close());

const state = () => tableState(process.env.DDB_ENDPOINT!, process.env.TABLE_NAME!);
const H = { 'x-auth-token': 'admin', accept: 'application/json', 'content-type': 'application/json' };

/** Send raw bytes; expect `status` (and `code`), and an unchanged table. */
async function refused(
  method: string,
  path: string,
  raw: string | Buffer | undefined,
  status: number,
  opts: { version?: string; code?: string; detail?: RegExp } = {},
) {
  const before = await state();
  const res = await send(api.url, {
    method,
    path,
    headers: { ...H, 'openstack-api-version': `placement ${opts.version ?? 'latest'}` },
    body: raw === undefined ? undefined : Buffer.isBuffer(raw) ? raw : Buffer.from(raw),
  });
  expect(res.status, `${method} ${path.slice(0, 80)} ${String(raw).slice(0, 120)}: ${res.text.slice(0, 300)}`).toBe(status);
  if (res.headers['content-type']?.toString().startsWith('application/json')) {
    const body = JSON.parse(res.text);
    expect(body.errors[0].status).toBe(status);
    if (opts.code) expect(body.errors[0].code).toBe(opts.code);
    if (opts.detail) expect(body.errors[0].detail).toMatch(opts.detail);
  }
  expect(await state(), 'the table changed').toBe(before);
}

describe('Placement integers', () => {
  const inv = (total: string) => `{"resource_class": "MEMORY_MB", "total": ${total}}`;
  it('inventory totals past 2147483647, past 2^53, infinite, zero, negative or fractional are 400', async () => {
    for (const t of ['2147483648', '9007199254740993', '123456789012345678901234567890', '1e400', '0', '-1', '1.5', '"1"', 'null', 'true']) {
      await refused('POST', `/resource_providers/${rp}/inventories`, inv(t), 400, { detail: /JSON does not validate|Malformed JSON/ });
    }
  });
  it('2147483647 itself is accepted', async () => {
    const r = await api.req('POST', `/resource_providers/${rp}/inventories`, { raw: inv('2147483647') });
    expect(r.status, r.text).toBe(201);
  });
  it('allocation amounts past 2147483647, zero, negative or fractional are 400', async () => {
    for (const a of ['2147483648', '9007199254740993', '0', '-1', '1.5', '1e400']) {
      const body = `{"allocations": {"${rp}": {"resources": {"VCPU": ${a}}}}, "project_id": "p", "user_id": "u", "consumer_generation": null}`;
      await refused('PUT', `/allocations/${consumer}`, body, 400);
    }
  });
  it('a generation past 2^53 is a conflict, not a crash', async () => {
    await refused('PUT', `/resource_providers/${rp}/traits`, '{"traits": [], "resource_provider_generation": 9007199254740993}', 409, {
      code: 'placement.concurrent_update',
    });
    await refused('PUT', `/resource_providers/${rp}/traits`, '{"traits": [], "resource_provider_generation": -1}', 409);
  });
  it('limit past any integer is refused or honoured, never a crash', async () => {
    const r = await api.req('GET', '/allocation_candidates?resources=VCPU:1&limit=99999999999999999999');
    expect(r.status).toBe(200);
    await refused('GET', '/allocation_candidates?resources=VCPU:1&limit=-1', undefined, 400);
    const huge = await api.req('GET', '/allocation_candidates?resources=VCPU:99999999999999999999');
    expect(huge.status, huge.text).toBeLessThan(500);
  });
});

describe('Placement duplicate query keys it forbids', () => {
  it('root_required twice is 400 placement.query.duplicate_key', async () => {
    await refused('GET', '/allocation_candidates?resources=VCPU:1&root_required=HW_CPU_X86_AVX&root_required=!HW_CPU_X86_SSE', undefined, 400, {
      version: '1.35',
      code: 'placement.query.duplicate_key',
    });
  });
  it('member_of twice before 1.24 is 400, on candidates and provider lists', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    await refused('GET', `/allocation_candidates?resources=VCPU:1&member_of=${a}&member_of=${b}`, undefined, 400, {
      version: '1.23',
      detail: /Multiple member_of parameters are not supported/,
    });
    await refused('GET', `/resource_providers?member_of=${a}&member_of=${b}`, undefined, 400, {
      version: '1.23',
      detail: /Multiple member_of parameters are not supported/,
    });
  });
});

describe('Placement sizes, ids, encodings and types', () => {
  it('a body over the limit is 413 and a query string over the limit is 414', async () => {
    await refused('POST', '/resource_providers', `{"name": "${'x'.repeat(5 * 1024 * 1024)}"}`, 413);
    await refused('GET', `/resource_providers?name=${'x'.repeat(9000)}`, undefined, 414);
  });
  it('invalid uuids in bodies are 400; in paths they find nothing', async () => {
    await refused('POST', '/resource_providers', '{"name": "bad-uuid", "uuid": "not-a-uuid"}', 400, { detail: /is not a 'uuid'/ });
    await refused('POST', '/resource_providers', `{"name": "bad-parent", "parent_provider_uuid": "${'f'.repeat(36)}x"}`, 400);
    await refused('GET', `/resource_providers/${'a'.repeat(3000)}`, undefined, 404);
    await refused('DELETE', `/resource_providers/${'a'.repeat(3000)}`, undefined, 404);
    await refused('PUT', `/resource_providers/${'a'.repeat(3000)}/traits`, '{"traits": [], "resource_provider_generation": 0}', 404);
  });
  it('malformed JSON, wrong types, lone surrogates, invalid UTF-8 and deep nesting are 400', async () => {
    await refused('POST', '/resource_providers', '{"name": ', 400, { detail: /Malformed JSON/ });
    await refused('POST', '/resource_providers', '{"name": 5}', 400, { detail: /JSON does not validate/ });
    await refused('POST', '/resource_providers', '["name"]', 400);
    await refused('POST', '/resource_providers', '{"name": "\\ud800"}', 400, { detail: /Malformed JSON: unpaired surrogate/ });
    await refused('POST', '/resource_providers', Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), 400, {
      detail: /Malformed JSON/,
    });
    await refused('POST', '/resource_providers', `${'['.repeat(3000)}${']'.repeat(3000)}`, 400);
    await refused('GET', '/resource_providers?name=%FF', undefined, 400, { detail: /Invalid query string/ });
  });
  it('prototype keys (__proto__) anywhere in a body are 400 and change nothing', async () => {
    const proto = '"__proto__": {"total": 1}';
    await refused('PUT', `/resource_providers/${rp}/inventories`, `{"resource_provider_generation": 1, "inventories": {${proto}}}`, 400, {
      detail: /__proto__/,
    });
    await refused('POST', '/resource_providers', `{"name": "p", ${proto}}`, 400, { detail: /__proto__/ });
    const alloc = `{"allocations": {"${rp}": {"resources": {"__proto__": 1}}}, "project_id": "p", "user_id": "u", "consumer_generation": null}`;
    await refused('PUT', `/allocations/${consumer}`, alloc, 400, { detail: /__proto__/ });
    await refused('POST', '/allocations', `{"__proto__": {"allocations": {}, "project_id": "p", "user_id": "u", "consumer_generation": null}}`, 400, {
      detail: /__proto__/,
    });
    expect(({} as Record<string, unknown>).total).toBeUndefined();
  });
});
