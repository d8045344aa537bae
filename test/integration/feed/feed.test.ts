/**
 * The change feed and the allocation history end to end (docs/consistency.md, "The change
 * feed"; docs/operating.md, "Events and history"), with the events file on, against the shared
 * DynamoDB Local's streams:
 *
 *  - a workload of claims, moves, multi-consumer writes and deletes through 2 processes
 *    and the fault injector (lost answers, conflicts, throttling, in-progress, 5xx), with
 *    snapshots of every consumer taken at quiet moments during it: `npx berth history
 *    --at T` must give each snapshot back, from the history alone;
 *  - Placement's visible conformance files, replayed against `npm start` servers (plain;
 *    then a subset through the fault injector, and through 2 processes with faults);
 *  - the osc-placement and Nova report-client tests, replayed with their stacks' events on.
 *
 * After each: every committed change has exactly one event and every event a committed
 * change, per-key order holds, every event conforms to its schema, and the history says
 * what every consumer holds at the end (./check.ts). FEED_FULL=1 replays every
 * conformance file in every mode.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { client, startLocalStack } from '../harness.js';
import { needs } from '../../optional.js';
import { sharedDir } from '../../../scripts/optional-packages.mjs';
import { canon, checkFeed, scanTable, type FeedReport } from './check.js';

const ROOT = join(__dirname, '..', '..', '..');
const FULL = !!process.env.FEED_FULL;
const FAULTS = 'throttle=0.04,conflict=0.04,lost=0.04,inprogress=0.02,error=0.02,seed=11';
const dir = mkdtempSync(join(tmpdir(), 'berth-feed-'));
const endpoint = () => inject('ddbEndpoint');
const run = randomUUID().slice(0, 8);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** every list of the report empty, and some changes seen */
function expectClean(r: FeedReport) {
  expect(r.committed, `${r.table}: no committed change at all`).toBeGreaterThan(0);
  expect(
    {
      missing: r.missing,
      extra: r.extra,
      duplicates: r.duplicates,
      unnamed: r.unnamed,
      invalid: r.invalid.slice(0, 5),
      outOfOrder: r.outOfOrder,
      historyWrong: r.historyWrong,
    },
    r.table,
  ).toEqual({ missing: [], extra: [], duplicates: [], unnamed: [], invalid: [], outOfOrder: [], historyWrong: [] });
  expect(r.events).toBe(r.committed);
}

function sh(cmd: string, args: string[], env: Record<string, string | undefined> = {}): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => resolve({ code: code ?? 1, out }));
  });
}

/** what every consumer holds, from the table (a snapshot): consumer -> project and allocations */
async function snapshot(table: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const it of await scanTable(endpoint(), table)) {
    if (String(it.pk).startsWith('CONS#') && it.sk === 'CONS') out.set(String(it.uuid), canon({ project: it.project, allocations: it.allocs }));
  }
  return out;
}

/** what `npx berth history --all --at T` says every consumer held at T */
async function historyAt(table: string, t: number): Promise<Map<string, string>> {
  const r = await sh('node_modules/.bin/tsx', [
    'cli/berth.ts',
    '--table',
    table,
    '--endpoint',
    endpoint(),
    'history',
    '--all',
    '--at',
    String(t),
    '--format',
    'json',
  ]);
  if (r.code !== 0) throw new Error(`berth history: ${r.out}`);
  const rows = JSON.parse(r.out) as Array<{ consumer: string; project: string; provider: string; resource_class: string; amount: number }>;
  const by = new Map<string, { project: string; allocations: Record<string, Record<string, number>> }>();
  for (const row of rows) {
    const c = by.get(row.consumer) ?? { project: row.project, allocations: {} };
    (c.allocations[row.provider] ??= {})[row.resource_class] = row.amount;
    by.set(row.consumer, c);
  }
  return new Map([...by].map(([k, v]) => [k, canon(v)]));
}

describe('a workload through 2 processes and the fault injector', () => {
  it('one event per committed change, in order, valid; the history gives back every snapshot', { timeout: 600_000 }, async () => {
    const table = `feed_${run}_workload`;
    const { parseFaults } = await import('../../../local/ddb-faults.js');
    const eventsFile = join(dir, `${table}.jsonl`);
    const stack = await startLocalStack({ containers: 2, ddbFaults: parseFaults(FAULTS), eventsFile }, { table });
    const api = client(stack.placementUrl, async () => undefined);
    const snapshots: Array<{ t: number; held: Map<string, string> }> = [];
    try {
      const rps = Array.from({ length: 5 }, () => randomUUID());
      for (const [i, rp] of rps.entries()) {
        for (let tries = 0; tries < 5; tries++)
          if ((await api.req('POST', '/resource_providers', { body: { uuid: rp, name: `cn-${run}-${i}` } })).status < 300) break;
        for (let tries = 0; tries < 5; tries++) {
          const gen = (await api.req('GET', `/resource_providers/${rp}`)).json?.generation;
          const r = await api.req('PUT', `/resource_providers/${rp}/inventories`, {
            body: { resource_provider_generation: gen, inventories: { VCPU: { total: 64 }, MEMORY_MB: { total: 65536 }, DISK_GB: { total: 2000 } } },
          });
          if (r.status === 200) break;
        }
      }
      const consumers = Array.from({ length: 24 }, () => randomUUID());
      const pick = (n: number) => rps[n % rps.length]!;
      for (let round = 0; round < 4; round++) {
        const writes = consumers.map((c, i) => {
          const k = i + round;
          // some leave in a round, the others move between providers and change size
          if ((i + round) % 5 === 0) return api.req('DELETE', `/allocations/${c}`, { version: '1.27' });
          return api.req('PUT', `/allocations/${c}`, {
            version: '1.27',
            body: {
              allocations: {
                [pick(k)]: { resources: { VCPU: 1 + (k % 4), MEMORY_MB: 512 * (1 + (k % 3)) } },
                ...(k % 3 === 0 ? { [pick(k + 1)]: { resources: { DISK_GB: 10 } } } : {}),
              },
              project_id: `project-${i % 3}`,
              user_id: `user-${i % 2}`,
            },
          });
        });
        // two consumers in one change (POST /allocations)
        const [a, b] = [consumers[round]!, consumers[round + 10]!];
        writes.push(
          api.req('POST', '/allocations', {
            version: '1.27',
            body: {
              [a]: { allocations: { [pick(round + 2)]: { resources: { VCPU: 2 } } }, project_id: 'project-0', user_id: 'user-0' },
              [b]: { allocations: { [pick(round + 3)]: { resources: { VCPU: 3 } } }, project_id: 'project-1', user_id: 'user-1' },
            },
          }),
        );
        await Promise.all(writes);
        // a quiet moment: what every consumer holds, and when
        await new Promise((r) => setTimeout(r, 300));
        const held = await snapshot(table);
        snapshots.push({ t: Date.now(), held });
        await new Promise((r) => setTimeout(r, 300));
      }
      // a change larger than one transaction (an intent): 60 consumers in one POST, one change
      const many = Array.from({ length: 60 }, () => randomUUID());
      const body = Object.fromEntries(
        many.map((c, i) => [c, { allocations: { [pick(i)]: { resources: { VCPU: 1 } } }, project_id: `project-${i % 3}`, user_id: 'user-0' }]),
      );
      // a 5xx may have come after the commit (a lost answer): what is stored decides, as for a
      // client (sending it again would be a second change, with an event of its own)
      const stored = async () => {
        for (let i = 0; i < 5; i++) {
          const r = await api.req('GET', `/allocations/${many[0]}`);
          if (r.status === 200) return Object.keys(r.json?.allocations ?? {}).length > 0;
        }
        return false;
      };
      for (let tries = 0; tries < 5; tries++) {
        if ((await api.req('POST', '/allocations', { version: '1.27', body })).status === 204 || (await stored())) break;
      }
      await new Promise((r) => setTimeout(r, 300));
      snapshots.push({ t: Date.now(), held: await snapshot(table) });
    } finally {
      await stack.stop();
    }
    const report = await checkFeed(endpoint(), table, eventsFile);
    process.stdout.write(
      `[feed] workload: ${report.committed} committed changes, ${report.events} events, ${snapshots.length} snapshots of ${snapshots.at(-1)?.held.size} consumers\n`,
    );
    expectClean(report);
    expect(report.committed).toBeGreaterThan(80);
    // the large change is one event naming all 60 consumers (or, had every try failed, none)
    const { readEvents } = await import('./check.js');
    const big = readEvents(eventsFile).filter((e) => (e.detail.subjects as string[]).length === 60);
    expect(big.length).toBeLessThanOrEqual(1);
    if (snapshots.at(-1)!.held.size >= 60) expect(big).toHaveLength(1);
    for (const s of snapshots) expect(await historyAt(table, s.t), `history at ${new Date(s.t).toISOString()}`).toEqual(s.held);
  });
});

const gabbi = needs('gabbi', 'conformance-suite');
/** the conformance files replayed under faults and through 2 processes (all with FEED_FULL) */
const SUBSET = [
  'allocations.yaml',
  'allocations-post.yaml',
  'reshaper.yaml',
  'resource-provider.yaml',
  'inventory.yaml',
  'traits.yaml',
  'aggregate.yaml',
  'consumer-types-1.38.yaml',
];

async function conformance(mode: string, files: string[] | 'all', extra: string): Promise<FeedReport[]> {
  const d = join(dir, mode);
  const prefix = `feed_${run}_${mode}`;
  const gabbits = join(sharedDir(), 'conformance', 'gabbits');
  const only = files === 'all' ? [] : files.flatMap((f) => ['--only', f]);
  // each server its own table and events file, named after its shell's pid (unique while it runs)
  const serverCmd =
    `cd ${ROOT} && mkdir -p ${d} && exec node_modules/.bin/tsx local/start.ts --ddb-endpoint ${endpoint()} --table ${prefix}_$$ ` +
    `--events-file ${d}/${prefix}_$$.jsonl --placement-port {port} --baremetal-port 0 --no-dashboard --maintenance-interval 0 ${extra}`;
  const r = await sh('/usr/bin/python3', [
    join(sharedDir(), 'conformance', 'run'),
    '--server-cmd',
    serverCmd,
    '--gabbits',
    gabbits,
    '--jobs',
    '2',
    ...only,
  ]);
  // the files may fail under faults (a 5xx where a test wants an answer): the feed is what is checked here
  if (!extra) expect(r.code, r.out.slice(-3000)).toBe(0);
  return checkDir(d);
}

/** every table a server used in `d`: its processor's checkpoint is there whether or not it wrote an event */
async function checkDir(d: string): Promise<FeedReport[]> {
  const reports: FeedReport[] = [];
  const cp = '.jsonl.checkpoint.json';
  for (const f of (existsSync(d) ? readdirSync(d) : []).filter((x) => x.endsWith(cp))) {
    const table = basename(f, cp);
    reports.push(await checkFeed(endpoint(), table, join(d, `${table}.jsonl`)));
  }
  return reports;
}

gabbi.describe("Placement's conformance files, replayed with the events file on", () => {
  it('plain: every file', { timeout: 1_200_000 }, async () => {
    const reports = await conformance('plain', 'all', '');
    // one table per file's server; files that only read commit nothing
    for (const r of reports) if (r.committed) expectClean(r);
    expect(reports.filter((r) => r.committed).length).toBeGreaterThanOrEqual(15);
  });

  it('through the fault injector', { timeout: 1_200_000 }, async () => {
    const reports = await conformance('faults', FULL ? 'all' : SUBSET, `--ddb-faults ${FAULTS}`);
    expect(reports.filter((r) => r.committed).length).toBeGreaterThanOrEqual(FULL ? 15 : SUBSET.length);
    for (const r of reports) if (r.committed) expectClean(r);
  });

  it('through 2 processes, with faults', { timeout: 1_200_000 }, async () => {
    const reports = await conformance('containers', FULL ? 'all' : SUBSET, `--containers 2 --ddb-faults ${FAULTS}`);
    expect(reports.filter((r) => r.committed).length).toBeGreaterThanOrEqual(FULL ? 15 : SUBSET.length);
    for (const r of reports) if (r.committed) expectClean(r);
  });
});

const clients = needs('openstack-cli', 'nova');

clients.describe('the osc-placement and Nova report-client tests, replayed with the events file on', () => {
  for (const [mode, faults] of [
    ['plain', ''],
    ['faults', FAULTS],
  ] as const) {
    it(mode, { timeout: 1_200_000 }, async () => {
      const d = join(dir, `clients-${mode}`);
      const r = await sh(
        'node_modules/.bin/vitest',
        ['run', 'test/integration/clients/osc-placement.test.ts', 'test/integration/clients/nova-report.test.ts'],
        {
          BERTH_TEST_DDB_ENDPOINT: endpoint(),
          BERTH_TEST_EVENTS_DIR: d,
          BERTH_TEST_DDB_FAULTS: faults || undefined,
        },
      );
      if (!faults) expect(r.code, r.out.slice(-3000)).toBe(0);
      const reports = await checkDir(d);
      expect(reports.length, r.out.slice(-2000)).toBeGreaterThanOrEqual(2);
      for (const rep of reports) expectClean(rep);
    });
  }
});
