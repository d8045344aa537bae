/**
 * Moving a cloud's Placement state into Berth and out again, against the real
 * Placement 8.0.0 (../shared/reference/serve-placement.sh): `berth import-placement`
 * passes while the source keeps changing, a final pass with the source frozen,
 * `berth verify-placement` (0 differences), and `berth export-placement` into a second,
 * empty reference (a round trip equal but for generations). Also: a pass cut short and
 * resumed, a table the import did not write refused, a source older than 1.28.
 *
 * The CLI runs as a real process on tables of the shared DynamoDB Local; the Placement
 * API of this process reads the same table with a warm provider snapshot (it must see
 * each pass through the change log, as a running deployment would).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { ensureTable, freePort } from '../../../local/ddb-local.js';
import { needs } from '../../optional.js';
import { placementCall, prng, referenceLauncher, startReference, waitForUp, type ReferenceServer } from '../differential-kit.js';
import { startPlacement, type Api } from '../harness.js';
import { runBerth } from '../cli/run-berth.js';
import { AGG, buildWorkload, churn, U, type Call } from './workload.js';

const reference = needs('placement', 'reference-servers');

let api: Api;
let table: string;
let endpoint: string;
let source: ReferenceServer | undefined;
let target: ReferenceServer | undefined;
let call: Call;

async function startRef(): Promise<ReferenceServer> {
  const r = startReference(referenceLauncher('serve-placement.sh'), await freePort());
  await waitForUp(r.url, 90_000);
  return r;
}

/** berth on `tbl` (default: this file's table) */
async function berth(args: string[], opts: { table?: string; env?: Record<string, string> } = {}) {
  return runBerth(args, { TABLE_NAME: opts.table ?? table, DDB_ENDPOINT: endpoint, ...opts.env }, 300_000);
}

async function ok(args: string[], opts: { table?: string; env?: Record<string, string> } = {}) {
  const r = await berth(args, opts);
  if (r.code !== 0) throw new Error(`berth ${args.join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr.slice(-3000)}`);
  return r;
}

async function freshTable(): Promise<string> {
  const t = `t_${randomUUID().replace(/-/g, '')}`;
  await ensureTable(endpoint, t, 'local', { stream: false });
  return t;
}

/** the figures a pass prints */
function passFigures(stdout: string) {
  const read = /read: (\d+) providers listed, (\d+) read whole, (\d+) consumers read/.exec(stdout);
  const wrote = /wrote: (\d+) items, deleted (\d+)/.exec(stdout);
  expect(read, stdout).not.toBeNull();
  expect(wrote, stdout).not.toBeNull();
  return { listed: Number(read![1]), whole: Number(read![2]), consumers: Number(read![3]), puts: Number(wrote![1]), deletes: Number(wrote![2]) };
}

const differences = (stdout: string) => Number(/(\d+) differences?:/.exec(stdout)?.[1] ?? Number.NaN);

beforeAll(async () => {
  if (!reference.available) return;
  api = await startPlacement();
  table = process.env.TABLE_NAME!;
  endpoint = inject('ddbEndpoint');
  source = await startRef();
  call = (method, path, body, version = '1.39') => placementCall(source!.url, method, path, version, body);
  await buildWorkload(call);
}, 240_000);

afterAll(async () => {
  source?.stop();
  target?.stop();
  await api?.close();
});

reference.describe('berth import-placement / verify-placement / export-placement against Placement 8.0.0', () => {
  const from = () => ['--from', source!.url, '--token', 'admin'];

  it('refuses a table holding Placement items it did not write', async () => {
    const other = await freshTable();
    // a provider bulk-loaded (a deployment in use)
    const file = join(mkdtempSync(join(tmpdir(), 'berth-import-')), 'one.yaml');
    writeFileSync(file, 'providers:\n  - {name: in-use, inventories: {VCPU: 4}}\n');
    await ok(['load', file], { table: other });
    const r = await berth(['import-placement', ...from()], { table: other });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/holds \d+ Placement item\(s\) that import-placement did not write/);
  });

  it('copies a live source in passes, then exactly in a final pass with the source frozen', { timeout: 600_000 }, async () => {
    // a warm snapshot in this process's API before anything is imported
    expect((await api.req('GET', '/resource_providers')).json.resource_providers).toEqual([]);
    const rng = prng(7);
    // pass 1 while the source changes
    const [first] = await Promise.all([ok(['import-placement', ...from()]), churn(call, rng.next, 12, 'p1')]);
    const f1 = passFigures(first.stdout);
    expect(f1.whole).toBe(f1.listed);
    expect(first.stderr).toMatch(/providers read \[#+\] \d+\/\d+ 100%/);
    expect(first.stdout).toMatch(
      /units: \d+ write units .*providers' items \d+ \([\d.]+ per provider\), allocations' \(rows, consumers, usage\) \d+ \([\d.]+ per allocation\)/,
    );
    // more changes, and a pass that copies only what changed
    await churn(call, rng.next, 8, 'p2');
    const second = passFigures((await ok(['import-placement', ...from()])).stdout);
    expect(second.whole).toBeGreaterThan(0);
    expect(second.whole).toBeLessThan(second.listed);

    // the freeze begins; the last changes before it keep every generation (DELETE
    // /allocations, an aggregate set below 1.19): a pass by generation cannot see them
    const victim = U('instance-3');
    expect((await call('DELETE', `/allocations/${victim}`)).status).toBe(204);
    const numa = U('compute-1-numa0');
    expect((await call('PUT', `/resource_providers/${numa}/aggregates`, [AGG.c], '1.18')).status).toBe(200);
    const quiet = passFigures((await ok(['import-placement', ...from()])).stdout);
    expect(quiet.whole).toBe(0);
    const before = await berth(['verify-placement', '--against', source!.url, '--token', 'admin']);
    expect(before.code).toBe(1);
    expect(before.stdout).toContain(`consumer ${victim}: source null`);
    expect(before.stdout).toMatch(new RegExp(`provider ${numa} \\(compute-1-numa0\\) aggregates`));

    // the final pass reads every provider's allocations and aggregates again
    const fin = await ok(['import-placement', ...from(), '--final']);
    expect(passFigures(fin.stdout).whole).toBe(0);
    expect(fin.stdout).toContain('final pass complete');
    const v = await ok(['verify-placement', '--against', source!.url, '--token', 'admin']);
    expect(differences(v.stdout)).toBe(0);
    expect(v.stdout).toMatch(/0 differences: \d+ providers, \d+ consumers, 3 projects, \d+ project users compared at 1\.39/);

    // and this process's API, warm since before the first pass, shows what the source shows
    const ours = (await api.req('GET', '/resource_providers')).json.resource_providers;
    const theirs = (await call('GET', '/resource_providers')).json.resource_providers;
    expect(ours.map((p: any) => [p.uuid, p.name, p.generation, p.parent_provider_uuid]).sort()).toEqual(
      theirs.map((p: any) => [p.uuid, p.name, p.generation, p.parent_provider_uuid]).sort(),
    );
    expect((await api.req('GET', '/usages?project_id=proj-1')).json).toEqual((await call('GET', '/usages?project_id=proj-1')).json);
  });

  it('is idempotent, and refuses another source or a table something else wrote to since', { timeout: 300_000 }, async () => {
    const again = passFigures((await ok(['import-placement', ...from(), '--final'])).stdout);
    expect([again.puts, again.deletes, again.whole, again.consumers]).toEqual([0, 0, 0, 0]);
    // a freeze-sized check: every provider's list entry, the details of a sample
    const sampled = await ok(['verify-placement', '--against', source!.url, '--token', 'admin', '--sample', '5']);
    expect(sampled.stdout).toMatch(/0 differences: \d+ providers \(the details of 5, a random sample\)/);
    const other = await berth(['import-placement', '--from', source!.url.replace('127.0.0.1', 'localhost'), '--token', 'admin']);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(`was imported from ${source!.url}`);
    // a client writes to the table: the next pass would overwrite it
    expect((await api.req('PUT', '/traits/CUSTOM_WRITTEN_HERE')).status).toBe(201);
    const refused = await berth(['import-placement', ...from()]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/Placement write\(s\) since import-placement's last pass \(e\.g\. TRAITS#\d \/ CUSTOM_WRITTEN_HERE/);
    expect((await api.req('DELETE', '/traits/CUSTOM_WRITTEN_HERE')).status).toBe(204);
  });

  it('resumes a pass cut short while reading, and one cut short while writing', { timeout: 300_000 }, async () => {
    const t = await freshTable();
    // killed at its 60th request to the source: what it read is in its journal
    const reading = await berth(['import-placement', ...from()], { table: t, env: { BERTH_IMPORT_FAULT_AFTER_READS: '60' } });
    expect(reading.signal).toBe('SIGKILL');
    // the next pass reads only the rest, and is killed after 30 writes
    const cut = await berth(['import-placement', ...from()], { table: t, env: { BERTH_IMPORT_FAULT_AFTER_WRITES: '30' } });
    expect(cut.signal).toBe('SIGKILL');
    expect(cut.stdout).toMatch(/\d+ reads of a pass cut short kept in .*berth-import-placement-\w+\.journal/);
    // (its report of what it read comes before it writes)
    const reused =
      /read: (\d+) providers listed, \d+ read whole, (\d+) consumers read \((\d+) providers and (\d+) consumers from the journal\); (\d+) requests/.exec(
        cut.stdout,
      );
    expect(reused, cut.stdout).not.toBeNull();
    const [listed, consumersRead, providersKept, consumersKept, requests] = reused!.slice(1).map(Number) as [number, number, number, number, number];
    expect(providersKept).toBeGreaterThan(0);
    // the list, the class and trait lists, 4 per provider and 1 per consumer not in the journal
    expect(requests).toBe(3 + 4 * (listed - providersKept) + consumersRead - consumersKept);
    // the cut pass left the table part-written
    expect((await berth(['verify-placement', '--against', source!.url, '--token', 'admin'], { table: t })).code).toBe(1);
    // meanwhile a consumer whose rows the cut pass may have written goes away
    expect((await call('DELETE', `/allocations/${U('instance-4')}`)).status).toBe(204);
    const resumed = await ok(['import-placement', ...from(), '--final'], { table: t });
    expect(resumed.stdout).toMatch(/pass 2 \(pass 1 was cut short: this one completes it\)/);
    expect(resumed.stdout).toMatch(/\d+ allocation rows checked after the cut-short pass/);
    const v = await ok(['verify-placement', '--against', source!.url, '--token', 'admin'], { table: t });
    expect(differences(v.stdout)).toBe(0);
    // and the main table, still frozen at its final pass, sees the change as a difference
    const stale = await berth(['verify-placement', '--against', source!.url, '--token', 'admin']);
    expect(stale.code).toBe(1);
    expect(stale.stdout).toContain(`consumer ${U('instance-4')}: source null`);
    await ok(['import-placement', ...from(), '--final']);
  });

  it('round trip: export into an empty Placement, equal to the source but for generations', { timeout: 300_000 }, async () => {
    target = await startRef();
    const out = await ok(['export-placement', '--to', target.url, '--token', 'admin']);
    expect(out.stdout).toMatch(/exported \d+ providers, \d+ consumers/);
    // compute-4's VCPU was lowered below its usage: its allocations went in over a wider inventory
    expect(out.stdout).toMatch(/1 provider\(s\) whose inventory no longer takes its allocations written wide first/);
    expect(out.stdout).toContain('generations start again');
    const rt = await ok(['verify-placement', '--against', target.url, '--token', 'admin', '--ignore-generations']);
    expect(differences(rt.stdout)).toBe(0);
    // source and target compared directly (Berth's side given as a URL)
    const direct = await ok([
      'verify-placement',
      '--against',
      target.url,
      '--token',
      'admin',
      '--berth',
      source!.url,
      '--berth-token',
      'admin',
      '--ignore-generations',
    ]);
    expect(differences(direct.stdout)).toBe(0);
    // with generations, they differ: the target started them again
    const gens = await berth(['verify-placement', '--against', target.url, '--token', 'admin', '--max-differences', '500']);
    expect(gens.code).toBe(1);
    expect(gens.stdout).toMatch(/\.generation: source \d+, berth \d+/);
    expect(gens.stdout).not.toMatch(/inventories|traits:|aggregates:|usages/);
    // a target that is not empty is refused
    const twice = await berth(['export-placement', '--to', target.url, '--token', 'admin']);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/is not empty \(\d+ resource providers\)/);
  });

  it('a source read below 1.28 is refused unless its losses are accepted', { timeout: 300_000 }, async () => {
    const t = await freshTable();
    const refused = await berth(['import-placement', ...from(), '--microversion', '1.27'], { table: t });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/below 1\.28 loses:[\s\S]*consumer types[\s\S]*consumer generations/);
    const lossy = await ok(['import-placement', ...from(), '--microversion', '1.27', '--accept-losses', '--final'], { table: t });
    expect(lossy.stdout).toContain('read at 1.27');
    const v = await berth(['verify-placement', '--against', source!.url, '--token', 'admin', '--max-differences', '1000'], { table: t });
    expect(v.code).toBe(1);
    // what is lost is exactly what the source could not show: consumer generations and types
    const lines = v.stdout.split('\n').filter((l) => l.startsWith('  '));
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(l).toMatch(/consumer_generation|consumer_type|\.(INSTANCE|MIGRATION|unknown)\b|usages of project/);
  });
});
