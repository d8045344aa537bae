/**
 * The operators' CLI (`npx berth`, bin/berth.mjs → cli/berth.ts) run as a real
 * process against tables in DynamoDB Local, with the Placement API of this process
 * reading the same tables — so every command's effect is checked the way a client
 * would see it (including a warm provider snapshot picking up bulk-loaded and imported
 * providers through the change log).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureTable } from '../../../local/ddb-local.js';
import { startPlacement, type Api } from '../harness.js';
import { runBerth } from './run-berth.js';

const dir = mkdtempSync(join(tmpdir(), 'berth-cli-'));
let api: Api;
let table: string;
let endpoint: string;
const timings: { args: string[]; ms: number }[] = [];

interface Out {
  code: number;
  stdout: string;
  stderr: string;
}

async function berth(args: string[], env: Record<string, string> = {}): Promise<Out> {
  const r = await runBerth(args, { TABLE_NAME: table, DDB_ENDPOINT: endpoint, LEGACY_FLAG_TTL_MS: '50', ...env });
  timings.push({ args, ms: r.ms });
  return r;
}

async function ok(args: string[], env: Record<string, string> = {}): Promise<Out> {
  const r = await berth(args, env);
  if (r.code !== 0) throw new Error(`berth ${args.join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r;
}

const AGG = '5a3b0000-0000-4000-8000-00000000000a';
const CN = 'c0000000-0000-4000-8000-000000000001';
const CONSUMER = 'cccc0000-0000-4000-8000-000000000001';
const LEGACY = 'cccc0000-0000-4000-8000-0000000000ee';

beforeAll(async () => {
  // the API in this process shares the legacy flag's short TTL with the CLI processes
  api = await startPlacement({ LEGACY_FLAG_TTL_MS: '50' });
  table = process.env.TABLE_NAME!;
  endpoint = inject('ddbEndpoint');
});

afterAll(async () => {
  const total = timings.reduce((s, t) => s + t.ms, 0);
  if (timings.length) process.stdout.write(`[cli] berth: ${timings.length} runs, ${(total / 1000).toFixed(1)} s\n`);
  await api?.close();
});

describe('berth (operators’ CLI)', () => {
  it('prints its usage; unknown commands fail', async () => {
    const help = await ok(['help']);
    expect(help.stdout).toContain('usage: berth');
    for (const c of [
      'tree',
      'load FILE',
      'export',
      'import FILE',
      'import-legacy FILE',
      'migrate-consumers',
      'import-placement --from URL',
      'verify-placement --against URL',
      'export-placement --to URL',
    ])
      expect(help.stdout).toContain(c);
    const bad = await berth(['frobnicate']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown command frobnicate');
  });

  it('bulk-loads a YAML file (nested children, parents by name, custom names) with a progress bar', async () => {
    // a warm snapshot in the API before the load: it must see the new providers through the change log
    expect((await api.req('GET', '/resource_providers')).json.resource_providers).toEqual([]);
    const file = join(dir, 'cloud.yaml');
    writeFileSync(
      file,
      `resource_classes: [CUSTOM_FPGA_X]
traits: [CUSTOM_RACK_A]
providers:
  - name: cn-1
    uuid: ${CN}
    inventories:
      DISK_GB: {total: 1000, reserved: 100}
    aggregates: [${AGG}]
    children:
      - name: cn-1-numa0
        inventories: {VCPU: 32, MEMORY_MB: {total: 65536, allocation_ratio: 1.5}}
        traits: [HW_CPU_X86_AVX2, CUSTOM_RACK_A]
      - name: cn-1-numa1
        inventories: {VCPU: 32}
  - name: cn-1-fpga
    parent: cn-1-numa1
    inventories: {CUSTOM_FPGA_X: 2}
${Array.from({ length: 40 }, (_, i) => `  - {name: edge-${String(i).padStart(2, '0')}, inventories: {VCPU: 4}}`).join('\n')}
`,
    );
    const r = await ok(['load', file]);
    expect(r.stdout).toContain('loaded 44 providers');
    // progress: a bar that reaches 44/44 (not a terminal: lines, then the final one)
    expect(r.stderr).toMatch(/\[#+\.*\] \d+\/44/);
    expect(r.stderr).toContain('44/44 100%');
    // its rate and the write units it cost: a provider's definition, its state and its name
    // item each (one unit apiece, small items here), the one tree with members (cn-1's),
    // every provider's gsi1 entry, and a change-log entry per batch of 12 — 4 batches for
    // 44 providers, and again for a batch stored late
    const rep = /(\d+) providers\/s .* ([\d.]+) write units per provider \(table ([\d.]+), gsi1 ([\d.]+); (\d+) items/.exec(r.stdout);
    expect(rep, r.stdout).not.toBeNull();
    expect(Number(rep![1])).toBeGreaterThan(0);
    const items = Number(rep![5]);
    expect(items).toBeGreaterThanOrEqual(44 * 3 + 1 + 4);
    expect(items).toBeLessThanOrEqual(44 * 3 + 1 + 4 * 3);
    expect(Number(rep![3])).toBeCloseTo(items / 44, 2);
    expect(Number(rep![4])).toBeCloseTo(1, 2);
    expect(r.stdout).toMatch(/forest image of 44 providers written .* \d+ write units/);

    const list = (await api.req('GET', '/resource_providers')).json.resource_providers;
    expect(list.length).toBe(44);
    const by = Object.fromEntries(list.map((p: any) => [p.name, p]));
    expect(by['cn-1'].uuid).toBe(CN);
    expect(by['cn-1-numa0'].parent_provider_uuid).toBe(CN);
    expect(by['cn-1-fpga'].parent_provider_uuid).toBe(by['cn-1-numa1'].uuid);
    expect(by['cn-1-fpga'].root_provider_uuid).toBe(CN);
    const inv = (await api.req('GET', `/resource_providers/${by['cn-1-numa0'].uuid}/inventories`)).json.inventories;
    expect(inv.MEMORY_MB).toMatchObject({ total: 65536, allocation_ratio: 1.5 });
    expect((await api.req('GET', `/resource_providers/${by['cn-1-numa0'].uuid}/traits`)).json.traits.sort()).toEqual([
      'CUSTOM_RACK_A',
      'HW_CPU_X86_AVX2',
    ]);
    expect((await api.req('GET', `/resource_providers/${CN}/aggregates`)).json.aggregates).toEqual([AGG]);
    expect((await api.req('GET', '/resource_classes/CUSTOM_FPGA_X')).status).toBe(200);
    // the loaded custom class is referenced: it cannot be deleted under the inventory
    expect((await api.req('DELETE', '/resource_classes/CUSTOM_FPGA_X')).status).toBe(409);
    // and the loaded forest is usable: candidates across the tree
    const c = await api.req('GET', '/allocation_candidates?resources=VCPU:4,DISK_GB:10&required=CUSTOM_RACK_A');
    expect(c.status).toBe(200);
    expect(c.json.allocation_requests.length).toBe(1);
  });

  it('refuses a bad file or providers that already exist, writing nothing', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'providers:\n  - name: x\n    inventories: {vcpu: 4}\n');
    const r1 = await berth(['load', bad]);
    expect(r1.code).toBe(1);
    expect(r1.stderr).toContain('providers.0.inventories.vcpu');
    const orphan = join(dir, 'orphan.json');
    writeFileSync(orphan, JSON.stringify([{ name: 'lonely', parent: 'nowhere' }]));
    const r2 = await berth(['load', orphan]);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain('parent nowhere must be a provider earlier in the file');
    const again = await berth(['load', join(dir, 'cloud.yaml')]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exist');
    expect((await api.req('GET', '/resource_providers')).json.resource_providers.length).toBe(44);
  });

  it('shows the provider tree (all, or one subtree) with usage', async () => {
    const numa0 = (await api.req('GET', '/resource_providers?name=cn-1-numa0')).json.resource_providers[0].uuid;
    const put = await api.req('PUT', `/allocations/${CONSUMER}`, {
      body: {
        allocations: { [numa0]: { resources: { VCPU: 6 } } },
        project_id: 'p1',
        user_id: 'u1',
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      },
    });
    expect(put.status).toBe(204);
    const all = (await ok(['tree'])).stdout;
    const lines = all.split('\n');
    const at = lines.findIndex((l) => l.startsWith(`cn-1  ${CN}`));
    expect(at).toBeGreaterThanOrEqual(0);
    const want: (string | RegExp)[] = [
      `cn-1  ${CN}  gen 2`,
      '│  inventory: DISK_GB 0/900',
      `│  aggregates: ${AGG}`,
      // inventories + traits + the allocation: generation 3
      `├── cn-1-numa0  ${numa0}  gen 3`,
      '│      inventory: MEMORY_MB 0/98304, VCPU 6/32',
      '│      traits: CUSTOM_RACK_A, HW_CPU_X86_AVX2',
      /^└── cn-1-numa1 {2}[0-9a-f-]{36} {2}gen 1$/,
      '    │  inventory: VCPU 0/32',
      /^ {4}└── cn-1-fpga {2}[0-9a-f-]{36} {2}gen 1$/,
      '           inventory: CUSTOM_FPGA_X 0/2',
    ];
    for (const [i, w] of want.entries()) {
      if (typeof w === 'string') expect(lines[at + i]).toBe(w);
      else expect(lines[at + i]).toMatch(w);
    }
    expect(lines.filter((l) => /^edge-\d\d {2}/.test(l)).length).toBe(40);
    const one = (await ok(['tree', 'cn-1-numa1'])).stdout.trim().split('\n');
    expect(one.length).toBe(4);
    expect(one[0]).toMatch(/^cn-1-numa1 /);
    const none = await berth(['tree', 'no-such-provider']);
    expect(none.code).toBe(1);
  });

  it('writes a forest image now, or one whenever the forest changed through a deploy window', async () => {
    const { readManifest } = await import('../../../functions/store/placement/image.js');
    const now = await ok(['image']);
    expect(now.stdout).toMatch(/\[berth image\] written: asked for \(\d+ providers/);
    const first = (await readManifest())!;
    expect(first.providers).toBeGreaterThan(40);
    // a window: a change meanwhile is imaged at the next round, nothing unchanged is written again
    const window = berth(['image', '--every', '1', '--for', '4']);
    await new Promise((r) => setTimeout(r, 1500));
    const made = await api.req('POST', '/resource_providers', { body: { name: `windowed-${randomUUID()}` }, version: '1.20' });
    expect(made.status).toBe(200);
    const w = await window;
    expect(w.code).toBe(0);
    // (its first round writes anyway: a new process read the index; later ones only when the forest changed)
    expect(w.stdout).toMatch(/not written: the image is recent/);
    expect(w.stdout).not.toMatch(/written: asked for/);
    const last = (await readManifest())!;
    expect(last.takenAt).toBeGreaterThan(first.takenAt);
    expect(last.providers).toBe(first.providers + 1);
    expect((await berth(['image', '--every', 'x'])).code).not.toBe(0);
    expect((await api.req('DELETE', `/resource_providers/${made.json.uuid}`)).status).toBe(204);
    // (an image without it: a dump carries the image but no change log, so an imported table's
    // cold load would show the provider again — the export test below imports this table)
    await ok(['image']);
  });

  it('exports the table and imports it into an empty one, where the API sees the same cloud', async () => {
    const dump = join(dir, 'dump.json');
    await ok(['export', dump]);
    const doc = JSON.parse(readFileSync(dump, 'utf8'));
    expect(doc).toMatchObject({ format: 'berth-dump', version: 1, table });
    // providers, names, the consumer, its row, usage shards, custom class and trait; no change log
    expect(doc.items.some((i: any) => i.pk.S.startsWith('LOG#'))).toBe(false);
    expect(doc.items.filter((i: any) => i.sk.S === 'RP').length).toBe(44);
    expect(doc.items.some((i: any) => i.pk.S === `CONS#${CONSUMER}`)).toBe(true);

    // refused into a table that has data
    const refused = await berth(['import', dump]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('not empty');

    const other = `t_${randomUUID().replace(/-/g, '')}`;
    await ensureTable(endpoint, other, 'local', { stream: false });
    const r = await ok(['--table', other, 'import', dump]);
    expect(r.stdout).toContain(`imported ${doc.items.length} items (44 providers)`);
    expect(r.stderr).toContain(`${doc.items.length}/${doc.items.length} 100%`);
    // the same items come back out
    const again = join(dir, 'dump2.json');
    await ok(['--table', other, 'export', again]);
    const key = (i: any) => `${i.pk.S}|${i.sk.S}`;
    const sorted = (d: any) => [...d.items].sort((a: any, b: any) => (key(a) < key(b) ? -1 : 1));
    expect(sorted(JSON.parse(readFileSync(again, 'utf8')))).toEqual(sorted(doc));

    // an API on the imported table: same providers, allocations and usages
    const { resetConfig } = await import('../../../functions/config.js');
    const { snapshot } = await import('../../../functions/store/placement/snapshot.js');
    const before = {
      providers: (await api.req('GET', '/resource_providers')).json,
      consumer: (await api.req('GET', `/allocations/${CONSUMER}`)).json,
      usages: (await api.req('GET', '/usages?project_id=p1')).json,
    };
    process.env.TABLE_NAME = other;
    resetConfig();
    snapshot().reset();
    try {
      expect((await api.req('GET', '/resource_providers')).json).toEqual(before.providers);
      expect((await api.req('GET', `/allocations/${CONSUMER}`)).json).toEqual(before.consumer);
      expect((await api.req('GET', '/usages?project_id=p1')).json).toEqual(before.usages);
    } finally {
      process.env.TABLE_NAME = table;
      resetConfig();
      snapshot().reset();
    }
  });

  it('imports pre-1.8 allocations and migrates them to consumer records', async () => {
    const numa1 = (await api.req('GET', '/resource_providers?name=cn-1-numa1')).json.resource_providers[0].uuid;
    const file = join(dir, 'legacy.yaml');
    writeFileSync(file, `- consumer: ${LEGACY}\n  allocations:\n    ${numa1}: {resources: {VCPU: 3}}\n    ${CN}: {DISK_GB: 20}\n`);
    const r = await ok(['import-legacy', file]);
    expect(r.stdout).toContain('imported the allocations of 1 consumer(s)');
    // legacy rows count in provider usage but have no consumer record yet
    expect((await api.req('GET', `/resource_providers/${numa1}/usages`)).json.usages).toEqual({ VCPU: 3 });
    expect((await api.req('GET', `/allocations/${LEGACY}`)).json.allocations).toEqual({});

    const m = await ok(['migrate-consumers', '--batch-size', '10']);
    expect(m.stdout).toMatch(/done: 1 consumer records created/);
    const after = (await api.req('GET', `/allocations/${LEGACY}`)).json;
    expect(after.allocations).toEqual({
      [numa1]: { resources: { VCPU: 3 }, generation: expect.any(Number) },
      [CN]: { resources: { DISK_GB: 20 }, generation: expect.any(Number) },
    });
    expect(after.consumer_generation).toBe(0);
    // a second run has nothing left to do
    expect((await ok(['migrate-consumers'])).stdout).toMatch(/done: 0 consumer records created/);
  });

  it('migrates a table written by aea5993: its dump imported, the table refused while it waits, then migrated', async () => {
    const v1 = `t_${randomUUID().replace(/-/g, '')}`;
    await ensureTable(endpoint, v1, 'local', { stream: false });
    const fixture = join(process.cwd(), 'test', 'fixtures', 'layout-v1', 'dump.json');
    await ok(['--table', v1, 'import', fixture]);
    expect((await ok(['--table', v1, 'migrate', '--status'])).stdout).toMatch(/: layout 1 -> 2, waiting; this release writes layout 2/);
    // Placement's items stay untouched until the migration opens
    const file = join(dir, 'one.yaml');
    writeFileSync(file, 'providers:\n  - name: not-now\n');
    const refused = await berth(['--table', v1, 'load', file]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/holds item layout 1.*npx berth migrate/s);
    const m = await ok(['--table', v1, 'migrate']);
    expect(m.stdout).toMatch(/migration opened/);
    expect(m.stdout).toMatch(/: layout 2, complete/);
    expect(m.stderr).toMatch(/\[berth migrate\] \[#+\] 1000\/1000 100%/);
    expect((await ok(['--table', v1, 'migrate'])).stdout).toMatch(/nothing to do/);
    expect((await ok(['--table', v1, 'load', file])).stdout).toMatch(/1 provider/);
  });
});
