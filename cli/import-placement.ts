/**
 * `berth import-placement --from URL`: a running Placement's state into this table,
 * through Placement's own API, in passes (functions/core/placement/transfer.ts says
 * what a pass reads, functions/store/placement/transfer.ts what it writes):
 *
 *   berth import-placement --from URL [--token T]      a pass while the source runs
 *   berth import-placement --from URL --final          the last one, the source frozen
 *
 * Credentials as the OpenStack clients take them (cli/openstack-session.ts).
 * Each pass prints what it read and wrote, its rate and the write units it cost; a
 * final pass exits 1 when the source changed while it read (the freeze was not in
 * place: run it again). A table holding Placement items this import did not write is
 * refused, and so is one imported from another source.
 *
 * What a pass reads is journaled on local disk (cli/read-journal.ts; --journal
 * FILE, default in the OS's temporary directory, named by table and source) until the
 * pass ends: a pass cut short while reading resumes from it; one cut short while writing
 * is completed by the next (the writes are idempotent).
 *
 * BERTH_IMPORT_FAULT_AFTER_READS=N / BERTH_IMPORT_FAULT_AFTER_WRITES=N (tests only) kill
 * the process at its N-th source request / once N write requests are stored, as an
 * operator's Ctrl-C or a lost machine would.
 */
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ListedProvider, PassRead, PlacementState, ProviderRead, SourceConsumer } from '../functions/core/placement/transfer.js';
import { parseFlags, positiveInt } from './flags.js';
import { openstackSession } from './openstack-session.js';
import { atLeast, lossesAt, PlacementApi, versionText } from './placement-api.js';
import { progressBar } from './progress.js';
import { ReadJournal } from './read-journal.js';
import { berthSchema, meterBatchWrites, sdkStack } from './batch-write-units.js';

const USAGE = `usage: berth import-placement --from URL [--token T] [--final] [--concurrency N]
         [--write-concurrency N] [--accept-losses] [--microversion V] [--scan-segments N] [--journal FILE]`;

const say = (s: string) => process.stdout.write(`[berth import-placement] ${s}\n`);

/** Read what this pass needs of the source (see the core module's comment), reusing the journal's reads that still hold. */
export async function readSource(
  api: PlacementApi,
  prev: PlacementState,
  final: boolean,
  incomplete: { project: string; user: string },
  journal: ReadJournal,
): Promise<PassRead & { listAfter?: ListedProvider[] }> {
  const { providersForPass, consumersForPass } = await import('../functions/core/placement/transfer.js');
  const [list, classes, traits] = await Promise.all([api.providers(), api.resourceClasses(), api.traits()]);
  const listed = new Map(list.map((p) => [p.uuid, p.generation]));
  const plan = providersForPass(prev, list, final);
  const providers = new Map<string, ProviderRead>();
  const bar = progressBar('[berth import-placement] providers read');
  const todo = [...plan.full.map((u) => [u, true] as const), ...plan.allocationsAndAggregates.map((u) => [u, false] as const)];
  let done = 0;
  bar.update(0, todo.length);
  await Promise.all(
    todo.map(async ([uuid, whole]) => {
      const kept = journal.provider(uuid, listed.get(uuid)!, whole);
      if (kept) {
        providers.set(uuid, kept);
        bar.update(++done, todo.length);
        return;
      }
      const r: ProviderRead = { generations: [] };
      const seen = <T extends { generation: number }>(x: T | undefined): T | undefined => {
        if (!x) r.gone = true;
        else if (Number.isFinite(x.generation)) r.generations.push(x.generation);
        return x;
      };
      const [inv, tr, ag, al] = await Promise.all([
        whole ? api.inventories(uuid) : undefined,
        whole ? api.providerTraits(uuid) : undefined,
        api.aggregates(uuid),
        api.providerAllocations(uuid),
      ]);
      if (whole) {
        r.inventories = seen(inv)?.inventories;
        r.traits = seen(tr)?.traits;
      }
      r.aggregates = seen(ag)?.aggregates;
      r.allocations = seen(al)?.allocations;
      providers.set(uuid, r);
      journal.recordProvider(uuid, listed.get(uuid)!, whole, r);
      bar.update(++done, todo.length);
    }),
  );
  bar.finish(
    `${plan.full.length} whole, ${plan.allocationsAndAggregates.length} aggregates and allocations only, ${list.length - todo.length} unchanged`,
  );
  const wanted = consumersForPass(prev, list, providers, api.at(1, 28));
  // each consumer's generation as the allocation lists show it (what a journaled read must match)
  const shown = new Map<string, number>();
  for (const r of providers.values()) for (const a of r.allocations ?? []) if (a.generation !== undefined) shown.set(a.consumer, a.generation);
  const consumers = new Map<string, SourceConsumer | null>();
  const cbar = progressBar('[berth import-placement] consumers read');
  let cdone = 0;
  cbar.update(0, wanted.length);
  await Promise.all(
    wanted.map(async (c) => {
      let read: SourceConsumer | null | undefined = journal.consumer(c, shown.get(c));
      if (read === undefined) {
        read = await api.consumer(c, incomplete);
        journal.recordConsumer(read);
      }
      consumers.set(c, read);
      cbar.update(++cdone, wanted.length);
    }),
  );
  cbar.finish();
  const listAfter = final ? await api.providers() : undefined;
  return { list, classes, traits, providers, consumers, consumerGenerations: api.at(1, 28), listAfter };
}

export async function importPlacementCommand(args: string[]): Promise<number> {
  const flags = parseFlags(
    args,
    ['--from', '--token', '--concurrency', '--write-concurrency', '--microversion', '--scan-segments', '--journal'],
    ['--final', '--accept-losses'],
    USAGE,
  );
  const final = flags.switches.has('--final');
  const session = await openstackSession({ serviceType: 'placement', endpoint: flags.values.get('--from'), token: flags.values.get('--token') });
  let requests = 0;
  const faultAfterReads = Number(process.env.BERTH_IMPORT_FAULT_AFTER_READS ?? 0);
  const api = await PlacementApi.open(session, {
    concurrency: positiveInt(flags, '--concurrency'),
    newest: flags.values.get('--microversion'),
    onRequest: () => {
      if (++requests === faultAfterReads) process.kill(process.pid, 'SIGKILL');
    },
  });
  const version = versionText(api.version);
  say(`source ${api.endpoint} (Placement up to ${versionText(api.max)}, read at ${version}; ${session.auth})`);
  if (!atLeast(api.version, 1, 28)) {
    const lost = lossesAt(api.version);
    if (!flags.switches.has('--accept-losses'))
      throw new Error(`a source read below 1.28 loses:\n  - ${lost.join('\n  - ')}\nrun again with --accept-losses to import it anyway`);
    say(`read at ${version}, the import loses:\n  - ${lost.join('\n  - ')}`);
  }

  const { tableName, ddbRaw } = await import('../functions/store/ddb/client.js');
  const { writePass, reconcileRows } = await import('../functions/store/placement/transfer.js');
  const { readTable } = await import('../functions/store/placement/transfer-read.js');
  const { ImportRefused, beginPass, heartbeat, endPass } = await import('../functions/store/placement/transfer-record.js');
  const { nextState } = await import('../functions/core/placement/transfer-state.js');
  const { config } = await import('../functions/config.js');

  const t0 = performance.now();
  let scanned = 0;
  const table = await readTable({ segments: positiveInt(flags, '--scan-segments'), onProgress: (n) => (scanned = n) });
  const tTable = performance.now();
  const rec = table.record;
  if (!rec && table.placementItems > 0)
    throw new ImportRefused(
      `table ${tableName()} holds ${table.placementItems} Placement item(s) that import-placement did not write: import into an empty table (a deployment no client has written to)`,
    );
  if (rec && rec.source !== api.endpoint)
    throw new ImportRefused(`table ${tableName()} was imported from ${rec.source}, not ${api.endpoint}: one table, one source`);
  if (table.foreignCount)
    throw new ImportRefused(
      `table ${tableName()} has ${table.foreignCount} Placement write(s) since import-placement's last pass (e.g. ${table.foreign.join('; ')}): something else writes to it — a pass would overwrite that; import into a table no client uses yet`,
    );
  const interrupted = rec?.phase === 'writing';
  say(
    `table ${tableName()}: ${rec ? `pass ${rec.passes + 1}${interrupted ? ` (pass ${rec.passes} was cut short: this one completes it)` : ''}` : 'pass 1'}${final ? ', final' : ''}; ${table.state.providers.size} providers and ${table.state.consumers.size} consumers imported so far (${scanned} items read in ${((tTable - t0) / 1000).toFixed(1)} s)`,
  );

  const cfg = config();
  const { tableKey } = await import('../functions/store/ddb/per-table.js');
  const journalFile =
    flags.values.get('--journal') ??
    join(tmpdir(), `berth-import-placement-${createHash('sha1').update(`${tableKey()}|${api.endpoint}`).digest('hex').slice(0, 12)}.journal`);
  const journal = ReadJournal.open(journalFile, { table: tableKey(), source: api.endpoint, version, final });
  if (journal.size) say(`${journal.size} reads of a pass cut short kept in ${journalFile}: used again where they still hold`);
  const read = await readSource(api, table.state, final, { project: cfg.incompleteConsumerProjectId, user: cfg.incompleteConsumerUserId }, journal);
  const tRead = performance.now();
  const secs = (a: number, b: number) => Math.max((b - a) / 1000, 1e-9);
  const readWhole = [...read.providers.values()].filter((r) => r.inventories).length;
  const fromJournal = journal.reused.providers + journal.reused.consumers;
  say(
    `read: ${read.list.length} providers listed, ${readWhole} read whole, ${read.consumers.size} consumers read${fromJournal ? ` (${journal.reused.providers} providers and ${journal.reused.consumers} consumers from the journal)` : ''}; ${requests} requests in ${secs(tTable, tRead).toFixed(1)} s (${(requests / secs(tTable, tRead)).toFixed(0)}/s, ${api.concurrency} in flight)`,
  );
  const now = new Date().toISOString();
  const { state: next, notes } = nextState(table.state, read, { now, seqBase: 1 });
  const changedAfter = read.listAfter ? listDifferences(read.list, read.listAfter) : [];
  if (notes.unknownStandard.length)
    say(`names the source lists as standard that this Berth does not know, kept as its own: ${notes.unknownStandard.join(', ')}`);

  // the write units AWS would bill for what the pass writes (functions/store/ddb/units.ts)
  const schema = berthSchema(tableName());
  const units = meterBatchWrites(sdkStack(ddbRaw()), (t) => (t === schema.name ? schema : undefined));
  const ranks = new Map<string, Map<string, number>>();
  for (const [rp, r] of read.providers) if (r.allocations) ranks.set(rp, new Map(r.allocations.map((a, i) => [a.consumer, i])));
  const pass = await beginPass(rec, api.endpoint, version, now);
  const faultAfterWrites = Number(process.env.BERTH_IMPORT_FAULT_AFTER_WRITES ?? 0);
  // the units of each phase: the providers' side (their items, names, trees, custom
  // names, change log) and the allocations' side (rows, consumers, usage)
  const unitsNow = () => units.write + units.indexWrite;
  const byPhase: Record<string, number> = {};
  let current: string | undefined;
  let mark = 0;
  const closePhase = (next?: string) => {
    if (current) byPhase[current] = (byPhase[current] ?? 0) + unitsNow() - mark;
    current = next;
    mark = unitsNow();
  };
  const bar = progressBar('[berth import-placement] writes');
  const written = await writePass(table, next, {
    now,
    rank: (rp, c) => ranks.get(rp)?.get(c),
    concurrency: positiveInt(flags, '--write-concurrency'),
    onProgress: (done, total) => {
      bar.update(done, total);
      if (faultAfterWrites && done >= faultAfterWrites) process.kill(process.pid, 'SIGKILL');
    },
    heartbeat: () => heartbeat(pass, new Date().toISOString()),
    onPhase: (p) => closePhase(p),
  });
  closePhase();
  bar.finish(`${written.calls} BatchWriteItem calls, ${written.retries} retries`);
  let repaired = '';
  if (interrupted) {
    const r = await reconcileRows(next, {
      now,
      rank: (rp, c) => ranks.get(rp)?.get(c),
      concurrency: positiveInt(flags, '--write-concurrency'),
    });
    repaired = `; ${r.rows} allocation rows checked after the cut-short pass: ${r.deleted} deleted, ${r.written} written`;
  }
  const tWrite = performance.now();
  const allocations = [...next.consumers.values()].reduce((n, c) => n + Object.keys(c.allocations).length, 0);
  const sum = (m: Record<string, number>) => Object.values(m).reduce((a, b) => a + b, 0);
  const summary = {
    providers: next.providers.size,
    consumers: next.consumers.size,
    allocations,
    providersRead: readWhole,
    consumersRead: read.consumers.size,
    requests,
    puts: sum(written.puts),
    deletes: sum(written.deletes),
    writeUnits: Math.round(units.write + units.indexWrite),
    allocationUnits: Math.round((byPhase.allocations ?? 0) + (byPhase.consumers ?? 0) + (byPhase.usage ?? 0)),
  };
  const providerUnits = summary.writeUnits - summary.allocationUnits;
  await endPass(pass, final && !changedAfter.length && !notes.unsettled.length && !notes.deferred.length, summary, new Date().toISOString());
  await journal.remove();

  const per = (x: number, n: number) => (n ? (x / n).toFixed(2) : '0');
  say(
    `pass ${pass.passes}${final ? ' (final)' : ''}: ${next.providers.size} providers, ${next.consumers.size} consumers, ${allocations} allocations now in the table`,
  );
  say(
    `wrote: ${summary.puts} items, deleted ${summary.deletes} (${fmt(written.puts)}${summary.deletes ? `; deleted ${fmt(written.deletes)}` : ''}) in ${secs(tRead, tWrite).toFixed(1)} s${repaired}`,
  );
  say(
    `units: ${summary.writeUnits} write units (table ${units.write.toFixed(0)}, gsi1 ${units.indexWrite.toFixed(0)}; a put counted as a new item, a delete as 1): providers' items ${providerUnits} (${per(providerUnits, next.providers.size)} per provider), allocations' (rows, consumers, usage) ${summary.allocationUnits} (${per(summary.allocationUnits, allocations)} per allocation)`,
  );
  say(
    `rate: ${(next.providers.size / secs(t0, tWrite)).toFixed(0)} providers/s, ${(allocations / secs(t0, tWrite)).toFixed(0)} allocations/s over the whole pass (${secs(t0, tWrite).toFixed(1)} s: table ${secs(t0, tTable).toFixed(1)}, source ${secs(tTable, tRead).toFixed(1)}, writes ${secs(tRead, tWrite).toFixed(1)}); peak memory ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`,
  );
  const unsettled = [
    ...changedAfter,
    ...notes.unsettled.map((u) => `provider ${u} changed while it was read`),
    ...notes.deferred.map((c) => `consumer ${c} names a provider the list did not show`),
  ];
  if (unsettled.length) {
    const head = unsettled.slice(0, 10).join('\n  - ');
    if (final) {
      process.stderr.write(
        `[berth import-placement] the source changed during the final pass (${unsettled.length}):\n  - ${head}\nIs the write freeze in place? Run the final pass again once it is.\n`,
      );
      return 1;
    }
    say(`${unsettled.length} change(s) during the pass, for the next pass to copy: e.g.\n  - ${head}`);
  }
  if (final) say('final pass complete: run `npx berth verify-placement --against URL` before switching clients over');
  return 0;
}

const fmt = (m: Record<string, number>) =>
  Object.entries(m)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');

/** what differs between two lists of providers (the source changed meanwhile) */
function listDifferences(a: ListedProvider[], b: ListedProvider[]): string[] {
  const out: string[] = [];
  const bm = new Map(b.map((p) => [p.uuid, p]));
  for (const p of a) {
    const q = bm.get(p.uuid);
    if (!q) out.push(`provider ${p.uuid} deleted`);
    else if (q.generation !== p.generation || q.name !== p.name || q.parent !== p.parent) out.push(`provider ${p.uuid} changed`);
    bm.delete(p.uuid);
  }
  for (const u of bm.keys()) out.push(`provider ${u} created`);
  return out;
}
