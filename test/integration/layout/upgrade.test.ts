/**
 * Upgrading a table written by release aea5993 (layout 1) in place (docs/items.md,
 * "Layout versions and upgrades"): this release refuses it until its migration opens,
 * then serves it while it migrates — every read that release answered is answered the
 * same before, during and after the migration — and a migration that dies midway is
 * resumed by the next run.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startLocalStack } from '../harness.js';
import type { RunningStack } from '../../../local/start.js';
import { ask, differences, fixtureAnswers, importFixture, placementCall, type Urls } from './fixture.js';

const answers = fixtureAnswers();
let stack: RunningStack;
let urls: Urls;

/** a new table holding the fixture (as `berth import` leaves it), served as npm start serves it */
async function fresh(extra: Partial<Parameters<typeof startLocalStack>[0]> = {}): Promise<void> {
  const endpoint = inject('ddbEndpoint');
  const table = `t_${randomUUID().replace(/-/g, '')}`;
  stack = await startLocalStack(
    { layoutMigration: 'manual', ...extra },
    {
      table,
      before: async () => {
        Object.assign(process.env, { DDB_ENDPOINT: endpoint, TABLE_NAME: table, AWS_REGION: 'local' });
        const { resetConfig } = await import('../../../functions/config.js');
        resetConfig();
        await importFixture();
      },
    },
  );
  urls = { placement: stack.placementUrl, baremetal: stack.baremetalUrl };
}

describe('a table written by aea5993 (layout 1)', () => {
  beforeAll(() => fresh());
  afterAll(async () => stack?.stop());

  it('is recorded as layout 1 and refused by Placement (503) until its migration opens; bare metal serves it', async () => {
    const pl = await ask(urls, { api: 'placement', path: '/resource_providers', version: '1.39' });
    expect(pl.status).toBe(503);
    expect(JSON.parse(pl.body).errors[0].detail).toMatch(/holds item layout 1; this release serves it once the upgrade to layout 2 has begun/);
    expect(pl.headers.get('retry-after')).toBe('10');
    // bare metal's items are the same in both layouts: with the database scheduler it serves on
    expect(
      await differences(
        urls,
        answers.filter((a) => a.api === 'baremetal'),
      ),
    ).toEqual([]);
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
    // every Placement answer says where the table is (the dashboard shows it)
    expect((await ask(urls, { api: 'placement', path: '/traits', version: '1.39' })).headers.get('x-berth-layout')).toBe('1>2 migrating 0%');
  });

  it('converts every layout-1 item and still answers every read the same', async () => {
    const { migrateLayout } = await import('../../../functions/store/layout/migrate.js');
    let r = await migrateLayout({ deadline: Date.now() + 60_000 });
    while (!r.done) r = await migrateLayout({ deadline: Date.now() + 60_000 });
    const { forgetLayout, readLayoutRecord } = await import('../../../functions/store/layout/state.js');
    forgetLayout();
    expect(await readLayoutRecord()).toMatchObject({ version: 2, phase: 'complete' });
    expect(await differences(urls, answers)).toEqual([]);
    expect((await ask(urls, { api: 'placement', path: '/traits', version: '1.39' })).headers.get('x-berth-layout')).toBe('2');
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
  const { tableName } = await import('../../../functions/store/ddb/client.js');
  const { ddb } = await import('../../../functions/store/ddb/reads.js');
  const out: Record<string, any>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const r = await ddb().send(new ScanCommand({ TableName: tableName(), ConsistentRead: true, ExclusiveStartKey: start }));
    out.push(...(r.Items ?? []));
    start = r.LastEvaluatedKey;
  } while (start);
  return out;
}

describe('a layout-1 table migrating while clients write, through the fault injector, with a run that dies midway', () => {
  const RP = (n: number) => `00000001-0000-4000-8000-${String(n).padStart(12, '0')}`;
  /** providers whose generations the writers move (their answers are compared without them) */
  const touched = new Set([RP(2), RP(3), RP(4), RP(5)]);
  beforeAll(async () => {
    const { parseFaults } = await import('../../../local/ddb-faults.js');
    await fresh({ ddbFaults: parseFaults('rate=0.2,seed=11,lag=200') });
  });
  afterAll(async () => stack?.stop());

  it('serves every recorded read the same at every moment, keeps every write, and resumes a run that died', async () => {
    const { migrateLayout, migrationHooks, openMigration } = await import('../../../functions/store/layout/migrate.js');
    const { readLayoutRecord } = await import('../../../functions/store/layout/state.js');
    expect(await openMigration('test')).toBe(true);
    // its first step (custom classes and traits; requests wait a few seconds for it)
    await migrateLayout({ deadline: Date.now() });
    expect((await readLayoutRecord())?.phase).toBe('migrating');
    const pl = (method: string, path: string, body?: unknown, version = '1.39') => placementCall(urls.placement, method, path, body, version);
    let stop = false;
    const problems: string[] = [];
    // writers: claims of new consumers on layout-1 hosts, read back, then removed; a child
    // created and deleted under a layout-1 root; traits written again (the same) on one.
    // Through the fault injector a write may be answered 5xx: then it is stored or not, as
    // a read tells, and the writer goes on from what is stored (as the fault suite's do).
    const read = async (path: string, version = '1.39'): Promise<{ status: number; json: any }> => {
      for (let i = 0; ; i++) {
        const r = await pl('GET', path, undefined, version);
        if (r.status < 500 || i === 5) return { status: r.status, json: r.status < 300 ? await r.json() : undefined };
      }
    };
    const until2xx = async (what: string, send: () => Promise<Response>, gone: () => Promise<boolean>) => {
      for (let i = 0; i < 6; i++) {
        const r = await send();
        if (r.status < 300) return;
        if (r.status < 500) return void problems.push(`${what}: ${r.status} ${await r.text()}`);
        if (await gone()) return;
      }
      problems.push(`${what}: 5xx six times`);
    };
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const c = `0000000${w}-9999-4000-8000-${String(i).padStart(12, '0')}`;
        const rp = RP(2 + ((w + i) % 4));
        const body = { allocations: { [rp]: { resources: { VCPU: 1 } } }, project_id: 'p-writer', user_id: `w${w}`, consumer_type: 'INSTANCE' };
        const put = await pl('PUT', `/allocations/${c}`, { ...body, consumer_generation: null });
        const got: any = (await read(`/allocations/${c}`, '1.38')).json;
        const stored = got?.consumer_generation === 1 && JSON.stringify(got.allocations?.[rp]?.resources) === '{"VCPU":1}';
        if (put.status === 204 && !stored) problems.push(`claim ${c} answered 204, reads ${JSON.stringify(got)}`);
        if (put.status < 500 && put.status !== 204) problems.push(`claim ${c}: ${put.status} ${await put.text()}`);
        if (!stored && Object.keys(got?.allocations ?? {}).length) problems.push(`claim ${c} half stored: ${JSON.stringify(got)}`);
        if (stored)
          await until2xx(
            `delete ${c}`,
            () => pl('DELETE', `/allocations/${c}`),
            async () => !Object.keys((await read(`/allocations/${c}`, '1.38')).json?.allocations ?? {}).length,
          );
      }
    };
    const treeWriter = async () => {
      for (let i = 0; !stop; i++) {
        const child = `00000009-0000-4000-8000-${String(i).padStart(12, '0')}`;
        const exists = async () => (await read(`/resource_providers/${child}`)).status === 200;
        await until2xx(
          `create ${child}`,
          () => pl('POST', '/resource_providers', { uuid: child, name: `writer-child-${i}`, parent_provider_uuid: RP(1) }),
          exists,
        );
        const tree: any = (await read(`/resource_providers?in_tree=${RP(1)}`)).json;
        if (!tree?.resource_providers?.some((p: { uuid: string }) => p.uuid === child) || tree.resource_providers.length !== 5)
          problems.push(`in_tree while ${child} exists: ${JSON.stringify(tree).slice(0, 300)}`);
        await until2xx(
          `delete ${child}`,
          () => pl('DELETE', `/resource_providers/${child}`),
          async () => !(await exists()),
        );
        const traits: any = (await read(`/resource_providers/${RP(3)}/traits`)).json;
        const again = await pl('PUT', `/resource_providers/${RP(3)}/traits`, traits);
        // (a claim may move the generation in between: Placement's 409; a 5xx: tried next round)
        if (again.status !== 200 && again.status !== 409 && again.status < 500) problems.push(`traits again: ${again.status} ${await again.text()}`);
      }
    };
    // readers: what the writers leave alone must read as recorded at every moment
    const stable = answers.filter(
      (a) =>
        (a.path.startsWith('/usages?project_id=p-') && !a.path.includes('p-writer')) ||
        a.path.startsWith('/allocations/') ||
        a.path.includes(RP(41)) ||
        a.path.includes(RP(31)) ||
        a.path === '/resource_classes' ||
        a.path === '/traits?name=startswith:CUSTOM_',
    );
    const reader = async () => {
      while (!stop) for (const d of await differences(urls, stable, touched)) problems.push(`during: ${d}`);
    };
    const clients = [writer(1), writer(2), treeWriter(), reader()];
    // the migration, in small runs; the first page of segment 0 kills one run midway
    let died = false;
    migrationHooks.afterPage = (segment, page) => {
      if (segment === 0 && page === 0 && !died) {
        died = true;
        throw new Error('the maintenance function died');
      }
    };
    let runs = 0;
    let failed = 0;
    try {
      for (;;) {
        runs++;
        try {
          const r = await migrateLayout({ deadline: Date.now() + 1_500, pageSize: 20 });
          if (r.done) break;
        } catch (e) {
          failed++;
          expect((e as Error).message).toBe('the maintenance function died');
          // what the dead run finished stays done: its segment resumes after its last page
          const rec = await readLayoutRecord();
          expect(rec?.phase).toBe('migrating');
          expect(rec?.cursors?.['0']).toBeDefined();
          expect(rec?.cursors?.['0']).not.toBe('done');
        }
        expect(runs).toBeLessThan(500);
      }
    } finally {
      migrationHooks.afterPage = undefined;
      stop = true;
      await Promise.all(clients);
    }
    expect(died).toBe(true);
    expect(failed).toBe(1);
    expect(problems).toEqual([]);
    expect(await readLayoutRecord()).toMatchObject({ version: 2, phase: 'complete' });
    // the writers left nothing behind but their providers' generations
    expect(await differences(urls, answers, touched)).toEqual([]);
    const usage: any = await (await pl('GET', '/usages?project_id=p-writer', undefined, '1.38')).json();
    expect(usage.usages).toEqual({});
  });
});
