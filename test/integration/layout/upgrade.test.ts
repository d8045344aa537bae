/**
 * Upgrading a table written by release aea5993 (layout 1) in place (docs/design.md,
 * "Layout versions and upgrades"): this release refuses it until its migration opens,
 * then serves it while it migrates — every read that release answered is answered the
 * same before, during and after the migration — and a migration that dies midway is
 * resumed by the next run.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureTable } from '../../../local/ddb-local.js';
import type { RunningStack } from '../../../local/start.js';
import { ask, differences, fixtureAnswers, importFixture, type Urls } from './fixture.js';

const answers = fixtureAnswers();
let stack: RunningStack;
let urls: Urls;

async function fresh(): Promise<void> {
  const endpoint = inject('ddbEndpoint');
  const table = `t_${randomUUID().replace(/-/g, '')}`;
  await ensureTable(endpoint, table);
  Object.assign(process.env, { DDB_ENDPOINT: endpoint, TABLE_NAME: table, AWS_REGION: 'local' });
  const { resetConfig } = await import('../../../functions/config.js');
  resetConfig();
  await importFixture();
  const { startStack } = await import('../../../local/start.js');
  stack = await startStack({
    fresh: false,
    ddbEndpoint: endpoint,
    tableName: table,
    placementPort: 0,
    baremetalPort: 0,
    host: '127.0.0.1',
    maintenanceInterval: 0,
    dataDir: '',
    dashboardPort: null,
    layoutMigration: 'manual',
  });
  urls = { placement: stack.placementUrl, baremetal: stack.baremetalUrl };
}

describe('a table written by aea5993 (layout 1)', () => {
  beforeAll(fresh);
  afterAll(async () => stack?.stop());

  it('is recorded as layout 1 on first contact and refused (503, both APIs) until its migration opens', async () => {
    const pl = await ask(urls, { api: 'placement', path: '/resource_providers', version: '1.39' });
    expect(pl.status).toBe(503);
    expect(JSON.parse(pl.body).errors[0].detail).toMatch(/holds item layout 1; this release serves it once the upgrade to layout 2 has begun/);
    expect(pl.headers.get('retry-after')).toBe('10');
    const bm = await ask(urls, { api: 'baremetal', path: '/v1/nodes', version: '1.80' });
    expect(bm.status).toBe(503);
    expect(JSON.parse(JSON.parse(bm.body).error_message).faultstring).toMatch(/holds item layout 1/);
    // the documents that need no table are served
    expect((await ask(urls, { api: 'placement', path: '/', version: '1.39' })).status).toBe(200);
    const { readLayoutRecord } = await import('../../../functions/store/layout/state.js');
    expect(await readLayoutRecord()).toMatchObject({ version: 1, phase: 'waiting', target: 2 });
  });

  it('answers every read as aea5993 did once the migration opens, before anything else is converted', async () => {
    const { migrateLayout, openMigration } = await import('../../../functions/store/layout/migrate.js');
    expect(await openMigration('test')).toBe(true);
    // the preparing step only (custom classes and traits); the scan has not begun
    await migrateLayout({ deadline: Date.now() });
    const { readLayoutRecord, forgetLayout } = await import('../../../functions/store/layout/state.js');
    forgetLayout();
    expect(await readLayoutRecord()).toMatchObject({ phase: 'migrating', progress: { catalog: 7, scanned: 0 } });
    expect(await differences(urls, answers)).toEqual([]);
  });

  it('converts every layout-1 item and still answers every read the same', async () => {
    const { migrateLayout } = await import('../../../functions/store/layout/migrate.js');
    let r = await migrateLayout({ deadline: Date.now() + 60_000 });
    while (!r.done) r = await migrateLayout({ deadline: Date.now() + 60_000 });
    const { forgetLayout, readLayoutRecord } = await import('../../../functions/store/layout/state.js');
    forgetLayout();
    expect(await readLayoutRecord()).toMatchObject({ version: 2, phase: 'complete' });
    expect(await differences(urls, answers)).toEqual([]);
    // nothing of layout 1 is left, and layout 2's derived items are there
    const items = await scanTable();
    const { isV1Provider, isV1Row, isV1Usage } = await import('../../../functions/store/layout/v1.js');
    const left = items.filter((it) => [isV1Provider(it), isV1Row(it), isV1Usage(it), it.pk === 'RCS', it.pk === 'TRAITS'].some(Boolean));
    expect(left).toEqual([]);
    const defs = items.filter((it) => it.sk === 'RP' && String(it.pk).startsWith('RP#'));
    const states = new Set(items.filter((it) => it.sk === 'RPU').map((it) => it.pk));
    expect(defs.length).toBe(17);
    expect(defs.filter((d) => !states.has(d.pk))).toEqual([]);
    const trees = Object.fromEntries(items.filter((it) => it.sk === 'TREE').map((it) => [it.pk, [...(it.members as Set<string>)].sort()]));
    const RP = (n: number) => `00000001-0000-4000-8000-${String(n).padStart(12, '0')}`;
    expect(trees).toEqual({
      [`RP#${RP(1)}`]: [RP(11), RP(12), RP(13)],
      [`RP#${RP(2)}`]: [RP(21), RP(22)],
      [`RP#${RP(4)}`]: [RP(53)],
      [`RP#${RP(6)}`]: [RP(61)],
    });
    // the sharing provider is listed by its aggregate
    const AGG1 = '00000003-0000-4000-8000-000000000001';
    expect(items.filter((it) => it.pk === `AGG#${AGG1}` && String(it.sk).startsWith('S#')).map((it) => it.uuid)).toEqual([RP(31)]);
    // usage now in layout 2's items, legacy rows untouched (still waiting for their consumer migration)
    expect(items.filter((it) => /^USAGE#[^#]+#\d+$/.test(String(it.pk))).length).toBeGreaterThan(0);
    expect(items.filter((it) => it.legacy && it.gsi1pk).length).toBe(3);
  });
});

/** every item of the table (strongly consistent) */
async function scanTable(): Promise<Record<string, any>[]> {
  const { ScanCommand } = await import('@aws-sdk/lib-dynamodb');
  const { ddb, tableName } = await import('../../../functions/store/ddb/client.js');
  const out: Record<string, any>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const r = await ddb().send(new ScanCommand({ TableName: tableName(), ConsistentRead: true, ExclusiveStartKey: start }));
    out.push(...(r.Items ?? []));
    start = r.LastEvaluatedKey;
  } while (start);
  return out;
}
