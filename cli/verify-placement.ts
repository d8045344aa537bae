/**
 * `berth verify-placement --against URL`: every answer that says what a Placement holds,
 * asked of the source (URL) and of Berth, compared; the differences printed, exit 1 if
 * there is any.
 *
 * Berth is this table, its Placement handlers served in this process on a local port
 * (the same code Lambda runs, no response size limit), or a deployed Berth's URL
 * (`--berth URL`, credentials `--berth-token` or the OS_* ones). Both are read at the
 * newest microversion both speak. Compared:
 *   - the resource class and trait lists (as sets);
 *   - every provider: name, parent, root, generation; its inventories (every field),
 *     traits and aggregates (as sets), usages, and allocations (every consumer's
 *     amounts and consumer generation);
 *   - every consumer any provider lists: GET /allocations/{c} — amounts per provider,
 *     project, user, consumer generation, consumer type;
 *   - GET /usages of every project and of every project and user those consumers have.
 * `--sample N` compares every provider's list entry (name, parent, root, generation) but
 * the details of N of them, chosen at random, and their consumers: a check short enough
 * for a large cloud's freeze (the full comparison belongs to a rehearsal).
 * `--ignore-generations` leaves provider and consumer generations out (a round trip
 * through export-placement, whose target starts them again). Lists that Placement builds
 * without an order (traits, aggregates) are compared as sets, objects by key.
 */
import { berthPlacement } from './berth-placement.js';
import { parseFlags, positiveInt } from './flags.js';
import { openstackSession } from './openstack-session.js';
import { minVersion, PlacementApi, versionText } from './placement-api.js';
import { progressBar } from './progress.js';

const USAGE = `usage: berth verify-placement --against URL [--token T] [--berth URL] [--berth-token T]
         [--ignore-generations] [--sample N] [--concurrency N] [--max-differences N]`;

/** One difference: where, and what each side answered (undefined: nothing there). */
export interface Difference {
  where: string;
  source: unknown;
  berth: unknown;
}

const GENERATION_KEYS = new Set(['generation', 'consumer_generation', 'resource_provider_generation']);

/**
 * The differences between two answers: objects key by key (their order is not
 * compared), arrays element by element (sort sets before), everything else by value.
 */
export function compareValues(where: string, a: unknown, b: unknown, out: Difference[], opts: { ignoreGenerations?: boolean } = {}): void {
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    if (Array.isArray(a)) {
      const bb = b as unknown[];
      if (a.length !== bb.length) {
        out.push({ where, source: a, berth: b });
        return;
      }
      for (let i = 0; i < a.length; i++) compareValues(`${where}[${i}]`, a[i], bb[i], out, opts);
      return;
    }
    const ao = a as Record<string, unknown>;
    const bo = b as Record<string, unknown>;
    for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)])) {
      if (opts.ignoreGenerations && GENERATION_KEYS.has(k)) continue;
      compareValues(where ? `${where}.${k}` : k, ao[k], bo[k], out, opts);
    }
    return;
  }
  if (a !== b) out.push({ where, source: a, berth: b });
}

const sorted = <T>(xs: readonly T[] | undefined) => (xs ? [...xs].map(String).sort() : xs);
const show = (v: unknown) => (v === undefined ? '(none)' : JSON.stringify(v));

export interface VerifyResult {
  differences: Difference[];
  providers: number;
  /** providers whose details were compared (all, or the sample) */
  detailed: number;
  consumers: number;
  projects: number;
  users: number;
}

/** Compare everything both APIs say (see the module comment). */
export async function verify(
  source: PlacementApi,
  berth: PlacementApi,
  opts: { ignoreGenerations?: boolean; progress?: boolean; sample?: number } = {},
): Promise<VerifyResult> {
  const diffs: Difference[] = [];
  const cmp = (where: string, a: unknown, b: unknown) => compareValues(where, a, b, diffs, opts);
  const [sl, bl, sc, bc, st, bt] = await Promise.all([
    source.providers(),
    berth.providers(),
    source.resourceClasses(),
    berth.resourceClasses(),
    source.traits(),
    berth.traits(),
  ]);
  cmp('resource classes', sorted(sc), sorted(bc));
  cmp('traits', sorted(st), sorted(bt));
  const bm = new Map(bl.map((p) => [p.uuid, p]));
  const common: Array<{ uuid: string; name: string }> = [];
  for (const p of sl) {
    const q = bm.get(p.uuid);
    bm.delete(p.uuid);
    const where = `provider ${p.uuid} (${p.name})`;
    if (!q) {
      diffs.push({ where, source: 'present', berth: undefined });
      continue;
    }
    cmp(
      where,
      { name: p.name, parent: p.parent ?? null, root: p.root ?? null, generation: p.generation },
      { name: q.name, parent: q.parent ?? null, root: q.root ?? null, generation: q.generation },
    );
    common.push(p);
  }
  for (const q of bm.values()) diffs.push({ where: `provider ${q.uuid} (${q.name})`, source: undefined, berth: 'present' });
  // --sample N: every provider's list entry (its generation too) as above, the rest of N of them
  const detailed = opts.sample !== undefined && opts.sample < common.length ? sample(common, opts.sample) : common;

  const consumers = new Set<string>();
  const bar = opts.progress ? progressBar('[berth verify-placement] providers') : undefined;
  let done = 0;
  await Promise.all(
    detailed.map(async (p) => {
      const where = `provider ${p.uuid} (${p.name})`;
      const read = (api: PlacementApi) =>
        Promise.all([
          api.inventories(p.uuid),
          api.providerTraits(p.uuid),
          api.aggregates(p.uuid),
          api.providerUsages(p.uuid),
          api.providerAllocations(p.uuid),
        ]);
      const [[si, str, sa, su, sal], [bi, btr, ba, bu, bal]] = await Promise.all([read(source), read(berth)]);
      cmp(`${where} inventories`, si?.inventories, bi?.inventories);
      cmp(`${where} traits`, sorted(str?.traits), sorted(btr?.traits));
      cmp(`${where} aggregates`, sorted(sa?.aggregates), sorted(ba?.aggregates));
      cmp(`${where} usages`, su, bu);
      const allocs = (l: typeof sal) =>
        Object.fromEntries((l?.allocations ?? []).map((a) => [a.consumer, { resources: a.resources, consumer_generation: a.generation ?? null }]));
      cmp(`${where} allocations`, allocs(sal), allocs(bal));
      for (const a of [...(sal?.allocations ?? []), ...(bal?.allocations ?? [])]) consumers.add(a.consumer);
      bar?.update(++done, detailed.length);
    }),
  );
  bar?.finish();

  const users = new Set<string>();
  const projects = new Set<string>();
  const none = { project: '', user: '' };
  const cbar = opts.progress ? progressBar('[berth verify-placement] consumers') : undefined;
  done = 0;
  await Promise.all(
    [...consumers].map(async (c) => {
      const [a, b] = await Promise.all([source.consumer(c, none), berth.consumer(c, none)]);
      const view = (x: typeof a) =>
        x && {
          project_id: x.project,
          user_id: x.user,
          consumer_type: x.type ?? 'unknown',
          consumer_generation: x.generation,
          allocations: x.allocations,
        };
      cmp(`consumer ${c}`, view(a), view(b));
      for (const x of [a, b]) {
        if (!x) continue;
        projects.add(x.project);
        users.add(JSON.stringify([x.project, x.user]));
      }
      cbar?.update(++done, consumers.size);
    }),
  );
  cbar?.finish();

  if (source.at(1, 9) && berth.at(1, 9)) {
    await Promise.all([
      ...[...projects].map(async (p) => cmp(`usages of project ${p}`, await source.usages(p), await berth.usages(p))),
      ...[...users].map(async (pu) => {
        const [p, u] = JSON.parse(pu) as [string, string];
        cmp(`usages of project ${p} user ${u}`, await source.usages(p, u), await berth.usages(p, u));
      }),
    ]);
  }
  return {
    differences: diffs,
    providers: sl.length,
    detailed: detailed.length,
    consumers: consumers.size,
    projects: projects.size,
    users: users.size,
  };
}

/** `n` of `xs`, chosen at random */
function sample<T>(xs: readonly T[], n: number): T[] {
  const a = [...xs];
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(Math.random() * (a.length - i));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a.slice(0, n);
}

export async function verifyPlacementCommand(args: string[]): Promise<number> {
  const flags = parseFlags(
    args,
    ['--against', '--token', '--berth', '--berth-token', '--concurrency', '--max-differences', '--sample'],
    ['--ignore-generations'],
    USAGE,
  );
  if (!flags.values.get('--against')) throw new Error(`--against URL is required\n${USAGE}`);
  const concurrency = positiveInt(flags, '--concurrency');
  const sourceSession = await openstackSession({
    serviceType: 'placement',
    endpoint: flags.values.get('--against'),
    token: flags.values.get('--token'),
  });
  const berthSide = await berthPlacement(flags.values.get('--berth'), flags.values.get('--berth-token'));
  try {
    // the newest microversion both speak
    const s0 = await PlacementApi.open(sourceSession, { concurrency });
    const b0 = await PlacementApi.open(berthSide.session, { concurrency });
    const common = minVersion(s0.version, b0.version);
    const [source, berth] = [s0.speaking(common), b0.speaking(common)];
    const newest = versionText(common);
    const t0 = performance.now();
    const r = await verify(source, berth, {
      ignoreGenerations: flags.switches.has('--ignore-generations'),
      progress: true,
      sample: positiveInt(flags, '--sample'),
    });
    const max = positiveInt(flags, '--max-differences') ?? 100;
    for (const d of r.differences.slice(0, max)) process.stdout.write(`  ${d.where}: source ${show(d.source)}, berth ${show(d.berth)}\n`);
    if (r.differences.length > max) process.stdout.write(`  … and ${r.differences.length - max} more\n`);
    process.stdout.write(
      `[berth verify-placement] ${r.differences.length} difference${r.differences.length === 1 ? '' : 's'}: ${r.providers} providers${r.detailed < r.providers ? ` (the details of ${r.detailed}, a random sample)` : ''}, ${r.consumers} consumers, ${r.projects} projects, ${r.users} project users compared at ${newest}${flags.switches.has('--ignore-generations') ? ' (generations ignored)' : ''} — source ${source.endpoint}, berth ${berthSide.label} — in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
    );
    return r.differences.length ? 1 : 0;
  } finally {
    await berthSide.close();
  }
}
