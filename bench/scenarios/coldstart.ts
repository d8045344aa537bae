/**
 * coldstart: Berth at cloud size, as a new Lambda container meets it (issue 13).
 *
 *   npm run bench -- --scenario coldstart --sizes 100000,1000000
 *
 * Per size: bulk-load flat providers of placeload's shape with the store's bulk loader
 * (rate), end with a forest image as `berth load` does (size, time); then, each in a
 * fresh process with AWS's settings (bench/coldstart-child.ts: 6 MB answers, at most
 * 1,000 candidates, a heap like a 3008 MB Lambda's), time the first answer to
 * GET /allocation_candidates?…&limit=1000, GET /resource_providers?uuid=… and
 * GET /resource_providers (gzip accepted, as OpenStack's clients do); report the
 * snapshot's load (image read, decode), heap and RSS; the warm p50 of a_c limit=1000
 * and of the upstream query; and the first answer of a warm process right after another
 * bulk load (5 % more providers) — its catch-up — next to a fresh process's first answer
 * at that same size (one before it, one after, once the machine is idle again; with the
 * CPU time each spent and the rest of the machine spent meanwhile).
 *
 * Sizes above 100,000 need a large heap in this process too (it keeps the loader's
 * forest): NODE_OPTIONS=--max-old-space-size=8192 npm run bench -- --scenario coldstart …
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { VALUE, pct, perfloadProviders, r1, threeAggregates, type BenchContext, type Scenario } from '../kit.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), '..', 'coldstart-child.ts');
const AGGS = threeAggregates();
const UPSTREAM = `resources=VCPU:1,DISK_GB:10,MEMORY_MB:256&member_of=${AGGS[0]}&required=HW_CPU_X86_AVX2`;
/** the heap of a 3008 MB Lambda (cdk/lib/function.ts: all but 384 MB) */
const LAMBDA_HEAP_MB = 2624;
const CHUNK = 50_000;

/** Bulk-load `count` more providers (in chunks: the input is large), then write the image as berth load does. */
async function load(
  ctx: BenchContext,
  count: number,
  offset: number,
): Promise<{ first?: string; rate: number; image: { ms: number; mb: number; delta: boolean } }> {
  const { bulkLoadProviders } = await import('../../functions/store/placement/bulk.js');
  const { imageAfterBulkLoad } = await import('../../functions/store/placement/bulk-image.js');
  const { snapshot } = await import('../../functions/store/placement/snapshot.js');
  await snapshot().fresh();
  let first: string | undefined;
  const t0 = performance.now();
  for (let done = 0; done < count; done += CHUNK) {
    const input = perfloadProviders(Math.min(CHUNK, count - done), offset + done, AGGS);
    first ??= input[0]!.uuid;
    const r = await bulkLoadProviders(input);
    snapshot().absorb(r.records, r.logEntries);
    ctx.say(`  loaded ${done + input.length} of ${count}`);
  }
  const s = (performance.now() - t0) / 1000;
  const i0 = performance.now();
  const img = await imageAfterBulkLoad({ records: [], logEntries: [] });
  return { first, rate: count / s, image: { ms: performance.now() - i0, mb: img.manifest.bytes / 1e6, delta: img.manifest.base !== undefined } };
}

interface Child {
  proc: ChildProcessWithoutNullStreams;
  url: string;
  startMs: number;
  stats(): Promise<Record<string, any>>;
  /** CPU time the process has used so far, ms (no collection forced, unlike stats()) */
  cpu(): Promise<number>;
  stop(): Promise<void>;
}

async function startChild(ctx: BenchContext): Promise<Child> {
  const t0 = performance.now();
  const proc = spawn(process.execPath, [`--max-old-space-size=${LAMBDA_HEAP_MB}`, '--expose-gc', '--import', 'tsx', CHILD], {
    env: {
      ...process.env,
      DDB_ENDPOINT: ctx.stack.handlerEndpoint,
      TABLE_NAME: ctx.stack.tableName,
      AWS_REGION: 'local',
      MAX_ALLOCATION_CANDIDATES: '1000',
      MAX_RESPONSE_BYTES: String(6 * 1024 * 1024),
      SNAPSHOT_RESYNC_S: '0',
      NODE_OPTIONS: '',
    },
  });
  const lines = createInterface({ input: proc.stdout });
  const waiting: Array<(v: Record<string, any>) => void> = [];
  let ready: (port: number) => void;
  const readyP = new Promise<number>((r) => (ready = r));
  lines.on('line', (l) => {
    if (!l.startsWith('{')) return;
    const msg = JSON.parse(l);
    if (msg.ready) ready(msg.port);
    else if (msg.stats) waiting.shift()?.(msg.stats);
    else if (msg.cpu !== undefined) waiting.shift()?.(msg);
  });
  proc.stderr.on('data', () => undefined);
  const port = await readyP;
  return {
    proc,
    url: `http://127.0.0.1:${port}`,
    startMs: performance.now() - t0,
    stats: () =>
      new Promise((r) => {
        waiting.push(r);
        proc.stdin.write('stats\n');
      }),
    cpu: () =>
      new Promise<Record<string, any>>((r) => {
        waiting.push(r);
        proc.stdin.write('cpu\n');
      }).then((m) => m.cpu as number),
    stop: async () => {
      proc.stdin.end();
      await new Promise((r) => proc.once('exit', r));
    },
  };
}

/** CPU time every process on this machine has spent, ms (os.cpus(): all cores) */
function machineCpuMs(): number {
  let t = 0;
  for (const c of cpus()) t += c.times.user + c.times.nice + c.times.sys + c.times.irq;
  return t;
}

/**
 * Wait (at most `maxMs`) until the machine has been idle for two seconds: right after a
 * bulk load DynamoDB Local and this process's collector keep cores busy for a while, and
 * a first answer timed then measures them too. Returns the time waited, ms.
 */
async function quiet(maxMs = 120_000): Promise<number> {
  const t0 = performance.now();
  for (let calm = 0; calm < 2 && performance.now() - t0 < maxMs; ) {
    const c0 = machineCpuMs();
    const w0 = performance.now();
    await new Promise((r) => setTimeout(r, 1000));
    const busy = (machineCpuMs() - c0) / ((performance.now() - w0) * cpus().length);
    calm = busy < 0.1 ? calm + 1 : 0;
  }
  return performance.now() - t0;
}

/** A child's first answer to `path` with the CPU time it spent on it and the CPU time the rest of the machine spent meanwhile. */
async function firstAnswer(child: Child, path: string) {
  const own0 = await child.cpu();
  const all0 = machineCpuMs();
  const r = await timed(child.url, path);
  const all1 = machineCpuMs();
  const own = (await child.cpu()) - own0;
  return { ...r, cpuMs: own, othersCpuMs: Math.max(0, all1 - all0 - own) };
}

async function timed(url: string, path: string, version = '1.39') {
  const t0 = performance.now();
  const r = await fetch(url + path, {
    headers: { 'x-auth-token': 'admin', accept: 'application/json', 'openstack-api-version': `placement ${version}`, 'accept-encoding': 'gzip' },
  });
  const bytes = Number(r.headers.get('content-length') ?? 0);
  const text = await r.text();
  return { status: r.status, ms: performance.now() - t0, bytes, text };
}

async function run(ctx: BenchContext) {
  const sizes = ctx.args.sizes ? ctx.args.sizes.split(',').map(Number) : ctx.quick ? [10000] : [100000];
  let loaded = 0;
  let someUuid = '';
  for (const size of sizes) {
    const label = `coldstart/${size}`;
    const l = await load(ctx, size - loaded, loaded);
    someUuid ||= l.first ?? '';
    loaded = size;
    ctx.emit({ kind: 'load', key: `${label}/bulk-load`, providers_per_s: r1(l.rate), image_write_ms: r1(l.image.ms), image_mb: r1(l.image.mb) });
    ctx.say(`${label}: bulk load ${r1(l.rate)} providers/s; image ${r1(l.image.mb)} MB written in ${r1(l.image.ms)} ms`);
    const queries: Array<[string, string, string?]> = [
      ['candidates-limit1000', `/allocation_candidates?${UPSTREAM}&limit=1000`],
      ['provider-by-uuid', `/resource_providers?uuid=${someUuid}`],
      ['provider-list', '/resource_providers', '1.0'],
    ];
    for (const [name, path, version] of queries) {
      const child = await startChild(ctx);
      const first = await timed(child.url, path, version);
      const st = await child.stats();
      const ld = st.snapshot.lastLoad ?? {};
      ctx.emit({
        kind: 'coldstart',
        key: `${label}/${name}`,
        process_start_ms: r1(child.startMs),
        first_ms: r1(first.ms),
        status: first.status,
        body_bytes: first.bytes,
        load_source: ld.source,
        load_ms: r1(ld.ms ?? 0),
        heap_mb: r1(st.heapMb),
        rss_mb: r1(st.rssMb),
        providers: st.providers,
      });
      ctx.say(
        `${label}: ${name}: first answer ${r1(first.ms)} ms (HTTP ${first.status}, ${r1(first.bytes / 1e6)} MB on the wire) in a fresh process (started in ${r1(child.startMs)} ms); forest from ${ld.source} in ${r1(ld.ms ?? 0)} ms; heap ${r1(st.heapMb)} MB, RSS ${r1(st.rssMb)} MB`,
      );
      if (name !== 'provider-list') {
        await child.stop();
        continue;
      }
      // warm figures and the catch-up, in this process
      for (const [wname, wpath] of [
        ['candidates-limit1000', `/allocation_candidates?${UPSTREAM}&limit=1000`],
        ['candidates-upstream', `/allocation_candidates?${UPSTREAM}`],
      ] as const) {
        const ms: number[] = [];
        for (let i = 0; i < 30; i++) {
          const r = await timed(child.url, wpath);
          if (r.status !== 200) throw new Error(`${wname}: ${r.status} ${r.text.slice(0, 200)}`);
          ms.push(r.ms);
        }
        ctx.emit({ kind: 'latency', key: `${label}/warm/${wname}`, p50_ms: r1(pct(ms, 50)), p95_ms: r1(pct(ms, 95)) });
        ctx.say(`${label}: warm ${wname}: p50 ${r1(pct(ms, 50))} ms, p95 ${r1(pct(ms, 95))} ms`);
      }
      const more = Math.max(1000, Math.round(size * 0.05));
      const l2 = await load(ctx, more, loaded);
      loaded += more;
      const before = await child.stats();
      // the catch-up against a fresh process's first answer at the same size (what it must
      // not exceed), under the same conditions: once the load's aftermath is over, one
      // fresh process before the catch-up and one after
      const waited = await quiet();
      const aPath = `/allocation_candidates?${UPSTREAM}&limit=1000`;
      const freshAnswer = async () => {
        const fresh = await startChild(ctx);
        const r = await firstAnswer(fresh, aPath);
        const st = await fresh.stats();
        await fresh.stop();
        return { ...r, st };
      };
      const coldA = await freshAnswer();
      const caught = await firstAnswer(child, aPath);
      const st2 = await child.stats();
      await child.stop();
      const via =
        st2.snapshot.deltaPatches > before.snapshot.deltaPatches
          ? 'delta image (changed providers)'
          : st2.snapshot.imagePatches > before.snapshot.imagePatches
            ? 'image (changed providers)'
            : st2.snapshot.imageLoads > before.snapshot.imageLoads
              ? 'image'
              : 'change log';
      const coldB = await freshAnswer();
      const cold = { ms: (coldA.ms + coldB.ms) / 2 };
      const st3 = coldB.st;
      const parts = (t?: Record<string, number>) =>
        t
          ? Object.entries(t)
              .map(([k, v]) => `${k} ${r1(v)}`)
              .join(', ')
          : '';
      ctx.emit({
        kind: 'catchup',
        key: `${label}/catch-up`,
        added: more,
        image_write_ms: r1(l2.image.ms),
        image_mb: r1(l2.image.mb),
        image_delta: l2.image.delta,
        providers: st2.providers,
        first_ms: r1(caught.ms),
        status: caught.status,
        via,
        refresh_ms: r1(st2.snapshot.lastRefreshMs),
        refresh_parts: st2.snapshot.lastRefreshParts,
        timings: via !== 'change log' ? st2.snapshot.lastLoad?.timings : undefined,
        cpu_ms: r1(caught.cpuMs),
        others_cpu_ms: r1(caught.othersCpuMs),
        waited_quiet_ms: r1(waited),
        cold_first_ms: r1(cold.ms),
        cold_first_each_ms: [r1(coldA.ms), r1(coldB.ms)],
        cold_cpu_ms: [r1(coldA.cpuMs), r1(coldB.cpuMs)],
        cold_others_cpu_ms: [r1(coldA.othersCpuMs), r1(coldB.othersCpuMs)],
        cold_load_ms: r1(st3.snapshot.lastLoad?.ms ?? 0),
        cold_timings: st3.snapshot.lastLoad?.timings,
      });
      ctx.say(
        `${label}: after a bulk load of ${more} more (${r1(l2.rate)}/s; its image ${l2.image.delta ? 'a delta of ' : ''}${r1(l2.image.mb)} MB, written in ${r1(l2.image.ms)} ms), and ${r1(waited / 1000)} s for the machine to go idle, a warm process's next answer took ${r1(caught.ms)} ms (caught up through the ${via}, refresh ${r1(st2.snapshot.lastRefreshMs)} ms: ${parts(st2.snapshot.lastRefreshParts)}${via !== 'change log' ? `; image ${parts(st2.snapshot.lastLoad?.timings)}` : ''}; its CPU ${r1(caught.cpuMs)} ms, other processes' ${r1(caught.othersCpuMs)} ms); a fresh process at the same size, before and after it: ${r1(coldA.ms)} / ${r1(coldB.ms)} ms (CPU ${r1(coldA.cpuMs)} / ${r1(coldB.cpuMs)} ms, others' ${r1(coldA.othersCpuMs)} / ${r1(coldB.othersCpuMs)} ms; image in ${r1(st3.snapshot.lastLoad?.ms ?? 0)} ms: ${parts(st3.snapshot.lastLoad?.timings)})`,
      );
    }
  }
}

export const coldstartScenario: Scenario = {
  name: 'coldstart',
  options: { sizes: VALUE },
  description: "a fresh process's first answers at cloud size (forest image), memory, warm latency, catch-up after a bulk load",
  optional: true,
  run,
};
