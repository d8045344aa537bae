/**
 * The table's layout record (functions/store/layout/state.ts): a release refuses, with a
 * clear message, a table whose layout it does not serve — newer than it writes, older
 * than it migrates, or not recorded yet — and records a table written before records
 * existed by what it holds.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startLocalStack } from '../harness.js';
import type { RunningStack } from '../../../local/start.js';
import { ask, type Urls } from './fixture.js';

let stack: RunningStack;
let urls: Urls;

beforeAll(async () => {
  const endpoint = inject('ddbEndpoint');
  const table = `t_${randomUUID().replace(/-/g, '')}`;
  stack = await startLocalStack(
    {},
    {
      table,
      before: async () => {
        Object.assign(process.env, { DDB_ENDPOINT: endpoint, TABLE_NAME: table, AWS_REGION: 'local' });
        const { resetConfig } = await import('../../../functions/config.js');
        resetConfig();
      },
    },
  );
  urls = { placement: stack.placementUrl, baremetal: stack.baremetalUrl };
});
afterAll(async () => stack?.stop());

/** set the record (undefined: remove it) and make this process read it again */
async function setRecord(record: Record<string, unknown> | undefined): Promise<void> {
  const { DeleteCommand, PutCommand } = await import('@aws-sdk/lib-dynamodb');
  const { tableName } = await import('../../../functions/store/ddb/client.js');
  const { ddb } = await import('../../../functions/store/ddb/reads.js');
  const { forgetLayout, layoutKey } = await import('../../../functions/store/layout/state.js');
  if (record) await ddb().send(new PutCommand({ TableName: tableName(), Item: { ...layoutKey(), ...record } }));
  else await ddb().send(new DeleteCommand({ TableName: tableName(), Key: layoutKey() }));
  forgetLayout();
}

const placementDetail = async (path = '/resource_providers') => {
  const r = await ask(urls, { api: 'placement', path, version: '1.39' });
  return { status: r.status, retry: r.headers.get('retry-after'), detail: r.status === 503 ? JSON.parse(r.body).errors[0].detail : r.body };
};
const baremetalFault = async () => {
  const r = await ask(urls, { api: 'baremetal', path: '/v1/nodes', version: '1.80' });
  return { status: r.status, fault: r.status === 503 ? JSON.parse(JSON.parse(r.body).error_message).faultstring : r.body };
};

describe('the layout record', () => {
  it('a new table is recorded at this release’s layout and served', async () => {
    const { readLayoutRecord } = await import('../../../functions/store/layout/state.js');
    expect(await readLayoutRecord()).toMatchObject({ version: 2, phase: 'complete' });
    expect((await placementDetail()).status).toBe(200);
  });

  it('refuses a table written by a newer release, in both APIs, changing nothing', async () => {
    await setRecord({ version: 3, phase: 'complete' });
    const p = await placementDetail();
    expect(p.status).toBe(503);
    expect(p.detail).toMatch(/holds item layout 3, written by a newer Berth release; this release reads layouts 1 to 2/);
    expect(p.retry).toBeNull();
    const created = await fetch(`${urls.placement}/resource_providers`, {
      method: 'POST',
      headers: { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'not-written' }),
    });
    expect(created.status).toBe(503);
    const b = await baremetalFault();
    expect(b.status).toBe(503);
    expect(b.fault).toMatch(/newer Berth release/);
    // the version documents still answer
    expect((await placementDetail('/')).status).toBe(200);
    await setRecord({ version: 2, phase: 'complete' });
    const list: any = await (await fetch(`${urls.placement}/resource_providers?name=not-written`, { headers: { 'x-auth-token': 'admin' } })).json();
    expect(list.resource_providers).toEqual([]);
  });

  it('refuses a table older than it can migrate, and a migration to a layout it does not write', async () => {
    await setRecord({ version: 0, phase: 'complete' });
    expect((await placementDetail()).detail).toMatch(/holds item layout 0, older than this release can migrate \(layout 1 or later\)/);
    await setRecord({ version: 2, phase: 'migrating', target: 3 });
    expect((await placementDetail()).detail).toMatch(/being migrated from item layout 2 to 3, which this release does not write/);
    await setRecord({ version: 2, phase: 'complete' });
  });

  it('without a record Placement waits for one (bare metal, on its own items, serves), and one is written by what the table holds', async () => {
    // a table of the release before records: layout-2 items, no record
    const made = await fetch(`${urls.placement}/resource_providers`, {
      method: 'POST',
      headers: { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'before-records' }),
    });
    expect(made.status).toBe(200);
    await setRecord(undefined);
    const p = await placementDetail();
    expect(p.status).toBe(503);
    expect(p.retry).toBe('10');
    expect(p.detail).toMatch(/item layout is not recorded yet/);
    expect((await baremetalFault()).status).toBe(200);
    // the maintenance function (or npx berth, or npm start) records it: layout 2, from its items
    const { runMaintenance } = await import('../../../functions/maintenance/handler.js');
    const reports = await runMaintenance(5_000);
    expect(reports.find((r) => r.task === 'layout')).toMatchObject({ phase: 'complete', done: true });
    const { readLayoutRecord } = await import('../../../functions/store/layout/state.js');
    expect(await readLayoutRecord()).toMatchObject({ version: 2, phase: 'complete' });
    expect((await placementDetail('/resource_providers?name=before-records')).status).toBe(200);
  });
});
