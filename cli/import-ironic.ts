/**
 * `berth import-ironic --from URL` and `berth verify-ironic --from URL`: moving in from
 * a running Ironic through its API (docs/moving.md, "From a running Ironic").
 *
 * import-ironic reads every node (GET /v1/nodes/detail: driver and interfaces, resource
 * class, traits, owner, lessee, properties, extra, provision/power/maintenance state,
 * instance and allocation links, …), every allocation (GET /v1/allocations) and the VIFs
 * of nodes whose network interface keeps any, at microversion min(Ironic's newest, 1.80);
 * refuses the whole import — writing nothing — if any node or allocation is in the middle
 * of something (functions/core/baremetal/ironic-import.ts says what), listing them; then
 * writes each node with its active allocation in one transaction, and the allocations bound
 * to no node (store/baremetal/import.ts). With the placement scheduler (the table's
 * `META` / `baremetal-scheduler`, or --scheduler) every node also becomes its resource
 * provider and every active allocation its consumer, as Berth's own writes make them.
 *
 * Into a table without bare metal only — unless what it holds is this import's own
 * earlier pass (same source, same scheduler, nothing else, nothing changed since): then
 * it writes what is missing, so an interrupted import is resumed by running it again, and
 * a finished one run again writes nothing. Placement's own data may be there (a Placement
 * import first): with the placement scheduler a node's provider that exists already —
 * Nova's ironic driver made it — is adopted by the node's write, as Berth's own node
 * writes adopt one.
 *
 * verify-ironic (./verify-ironic.ts) reads both APIs and prints every difference.
 */
import {
  allocationFromIronic,
  creationSeqs,
  linkProblems,
  nodeFromIronic,
  viewDifferences,
  ALLOCATION_FIELDS_FROM_IRONIC,
  NODE_FIELDS_FROM_IRONIC,
  type IronicObject,
} from '../functions/core/baremetal/ironic-import.js';
import type { NodeRecord } from '../functions/core/baremetal/records.js';
import type { StoredAllocation } from '../functions/store/baremetal/allocations.js';
import { connectIronic, pool, readContents, type BaremetalContents, type IronicApi } from './ironic-api.js';
import { openstackSession } from './openstack-session.js';
import { progressBar } from './progress.js';
import { parseFlags as parseOperatorFlags } from './flags.js';

export const out = (s: string) => process.stdout.write(`${s}\n`);
export const err = (s: string) => process.stderr.write(`${s}\n`);

export interface Flags {
  values: Record<string, string>;
  switches: Set<string>;
}

/** the flags of import-ironic and verify-ironic: `--name value` and `--switch`, nothing else */
export function parseFlags(argv: string[], withValue: string[], switches: string[], usage: string): Flags {
  const { values, switches: on } = parseOperatorFlags(argv, withValue, switches, usage, 'unexpected argument');
  return { values: Object.fromEntries(values), switches: on };
}

/** a few uuids, and how many more */
function some(xs: readonly string[], n = 5): string {
  return xs.length <= n ? xs.join(', ') : `${xs.slice(0, n).join(', ')} and ${xs.length - n} more`;
}

export const label = (o: IronicObject) => `${o.uuid}${o.name ? ` (${o.name})` : ''}`;

/** Ironic's noop network interface keeps no VIFs: its list is always empty */
export const keepsVifs = (n: IronicObject) => n.network_interface !== 'noop';

export async function connect(flags: Flags, endpointFlag: string, tokenFlag: string): Promise<IronicApi> {
  const session = await openstackSession({ serviceType: 'baremetal', endpoint: flags.values[endpointFlag], token: flags.values[tokenFlag] });
  const api = await connectIronic({ endpoint: session.endpoint, headers: session.authHeaders(), describe: session.auth });
  err(`[ironic] ${api.endpoint} (${session.auth}): microversions up to 1.${api.maxMinor}, reading at 1.${api.minor}`);
  return api;
}

export async function readSource(api: IronicApi, what: string): Promise<BaremetalContents> {
  let last = '';
  const t0 = performance.now();
  const c = await readContents(api, {
    askVifs: keepsVifs,
    onProgress: (kind, n) => {
      const s = `${kind} ${n}`;
      if (s !== last && (n % 500 === 0 || kind !== last.split(' ')[0])) err(`[${what}] read ${s}`);
      last = s;
    },
  });
  err(
    `[${what}] read ${c.nodes.length} nodes, ${c.allocations.length} allocations, ${c.vifs.size} VIF lists in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  return c;
}

// ------------------------------------------------------------------ the plan

interface Plan {
  nodes: NodeRecord[];
  /** the active allocation of each node that has one */
  bound: Map<string, StoredAllocation>;
  /** allocations bound to no node (error ones) */
  loose: StoredAllocation[];
  /** per object, why it cannot be imported as it is */
  blockers: string[];
  /** not carried, per kind, the objects */
  notCarried: Map<string, string[]>;
}

/** Turn what Ironic shows into Berth's records, and list what keeps the import from going ahead. */
export async function planImport(src: BaremetalContents): Promise<Plan> {
  const { completeNode, nodeToItem } = await import('../functions/store/baremetal/nodes.js');
  const { allocationToItem } = await import('../functions/store/baremetal/allocations.js');
  const { refuseOversized } = await import('../functions/store/baremetal/keys.js');
  const { enabledDrivers } = await import('../functions/conductor/driver.js');
  const plan: Plan = { nodes: [], bound: new Map(), loose: [], blockers: [], notCarried: new Map() };
  const note = (kind: string, what: string) => plan.notCarried.set(kind, [...(plan.notCarried.get(kind) ?? []), what]);
  const block = (kind: 'node' | 'allocation', o: IronicObject, why: string) => plan.blockers.push(`${kind} ${label(o)}: ${why}`);
  const fits = (kind: 'node' | 'allocation', o: IronicObject, item: Record<string, unknown>) => {
    try {
      refuseOversized(item, kind, String(o.uuid));
    } catch (e) {
      block(kind, o, (e as Error).message);
    }
  };
  const nodeSeqs = creationSeqs(src.nodes.map((n) => String(n.created_at)));
  const drivers = new Set(enabledDrivers());
  src.nodes.forEach((j, i) => {
    const imp = nodeFromIronic(j);
    for (const b of imp.blockers) block('node', j, b);
    if (imp.blockers.length) return;
    for (const m of imp.masked) note(`secrets Ironic showed masked (stored as ******: set them again in Berth): ${m}`, String(j.uuid));
    for (const d of imp.dropped) note(`${d} (Berth does not keep it)`, String(j.uuid));
    if (!drivers.has(imp.record.driver))
      note(`driver ${imp.record.driver}, which Berth does not enable (its power and provisioning actions are bookkeeping)`, String(j.uuid));
    const rec = completeNode({ ...imp.record, vifs: src.vifs.get(imp.record.uuid) ?? [], seq: nodeSeqs[i]!, ver: 0, lock: null, lock_action: null });
    fits('node', j, nodeToItem(rec));
    plan.nodes.push(rec);
  });
  const allocSeqs = creationSeqs(src.allocations.map((a) => String(a.created_at)));
  const allocations: StoredAllocation[] = [];
  src.allocations.forEach((j, i) => {
    const imp = allocationFromIronic(j);
    for (const b of imp.blockers) block('allocation', j, b);
    if (imp.blockers.length) return;
    for (const d of imp.dropped) note(`allocation ${d} (Berth does not keep it)`, String(j.uuid));
    const a: StoredAllocation = { ...imp.record, exec: null, exec_at: 0, seq: allocSeqs[i]!, ver: 0 };
    fits('allocation', j, allocationToItem(a));
    allocations.push(a);
  });
  // the links, as Ironic shows them (blocked objects included: their links are reported once, here)
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  const links = linkProblems(
    src.nodes.map((j) => ({ uuid: String(j.uuid), instance_uuid: str(j.instance_uuid), allocation_uuid: str(j.allocation_uuid) })),
    src.allocations.map((j) => ({ uuid: String(j.uuid), state: String(j.state), node_uuid: str(j.node_uuid) })),
  );
  const nodeIds = new Set(src.nodes.map((j) => String(j.uuid)));
  const byUuid = new Map<string, IronicObject>([...src.nodes, ...src.allocations].map((o) => [String(o.uuid), o]));
  for (const [uuid, whys] of links) for (const why of whys) block(nodeIds.has(uuid) ? 'node' : 'allocation', byUuid.get(uuid)!, why);
  for (const a of allocations) {
    if (a.state === 'active' && a.node_uuid) plan.bound.set(a.node_uuid, a);
    else plan.loose.push(a);
  }
  return plan;
}

/** what differs between a stored record and the one the import would write (carried fields, VIFs) */
function recordChanges(stored: Record<string, unknown>, planned: Record<string, unknown>, fields: readonly string[]): string[] {
  const pick = (r: Record<string, unknown>) => Object.fromEntries(fields.map((f) => [f, r[f] ?? null]));
  return viewDifferences(pick(planned), pick(stored), { unordered: new Set(['traits', 'vifs']) }).map((d) => d.field);
}

// ------------------------------------------------------------------ import-ironic

const IMPORT_USAGE =
  'usage: berth import-ironic [--from URL] [--token T] [--scheduler database|placement] [--concurrency N] [--dry-run]\n' +
  '  (credentials: OS_AUTH_TYPE none | admin_token + OS_TOKEN | password + OS_AUTH_URL, OS_USERNAME, …; see cli/openstack-session.ts)';

export async function importIronicCommand(argv: string[]): Promise<number> {
  const flags = parseFlags(argv, ['--from', '--token', '--scheduler', '--concurrency'], ['--dry-run'], IMPORT_USAGE);
  const wanted = flags.values['--scheduler'];
  if (wanted !== undefined && wanted !== 'database' && wanted !== 'placement')
    throw new Error(`--scheduler is database or placement\n${IMPORT_USAGE}`);
  const concurrency = flags.values['--concurrency'] !== undefined ? Number(flags.values['--concurrency']) : 4;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error('--concurrency needs a whole number of at least 1');
  const api = await connect(flags, '--from', '--token');
  return importIronic({ api, scheduler: wanted, concurrency, dryRun: flags.switches.has('--dry-run') });
}

export interface ImportOptions {
  api: IronicApi;
  /** the scheduler asked for (else the table's, else BAREMETAL_SCHEDULER, else database) */
  scheduler?: 'database' | 'placement';
  /** writes in flight (default 4) */
  concurrency?: number;
  dryRun?: boolean;
  /** after each node or allocation written (how many so far) */
  onWritten?: (done: number) => void;
}

/** The import itself, on the table this process's store points at; the exit status. */
export async function importIronic(opts: ImportOptions): Promise<number> {
  const { api } = opts;
  const wanted = opts.scheduler;
  const concurrency = opts.concurrency ?? 4;
  const t0 = performance.now();
  const src = await readSource(api, 'import-ironic');
  const plan = await planImport(src);
  if (plan.blockers.length) {
    err(`[import-ironic] refused, nothing written: ${plan.blockers.length} problem(s) with what Ironic holds; import when none is left:`);
    for (const b of plan.blockers) err(`  ${b}`);
    return 1;
  }

  // ---- which scheduler the table runs, and what it holds already
  const { readSchedulerState } = await import('../functions/store/baremetal/scheduler-state.js');
  const { tableName } = await import('../functions/store/ddb/client.js');
  const table = tableName();
  const tableMode = (await readSchedulerState()).mode;
  if (wanted === 'database' && tableMode === 'placement')
    throw new Error(`table ${table} runs bare metal with the placement scheduler (META baremetal-scheduler): import with --scheduler placement`);
  const scheduler: 'database' | 'placement' =
    wanted ?? (tableMode === 'placement' || process.env.BAREMETAL_SCHEDULER === 'placement' ? 'placement' : 'database');
  process.env.BAREMETAL_SCHEDULER = scheduler;
  (await import('../functions/config.js')).resetConfig();
  const imp = await import('../functions/store/baremetal/import.js');
  const layout = await imp.layoutProblem();
  if (layout) throw new Error(`table ${table}: ${layout}`);
  const survey = await imp.surveyTable();
  // an earlier pass counts only while its bare metal is in the table (one that wrote nothing is forgotten)
  const empty = imp.surveyIsEmpty(survey);
  const earlier = empty ? undefined : await imp.readImportState();
  let skipNodes = new Set<string>();
  let skipAllocations = new Set<string>();
  if (!empty) {
    const what = `${survey.nodes.size} nodes, ${survey.allocations.size} allocations, ${survey.others} other bare-metal items`;
    if (!earlier)
      throw new Error(
        `table ${table} holds bare metal already (${what}${survey.otherKeys.length ? `, e.g. ${survey.otherKeys.join('; ')}` : ''}) and no earlier import: import-ironic moves into a table without bare metal`,
      );
    if (earlier.source !== api.endpoint) throw new Error(`table ${table} holds an import from ${earlier.source}, not from ${api.endpoint}`);
    if (earlier.scheduler !== scheduler)
      throw new Error(`table ${table} holds an import made for the ${earlier.scheduler} scheduler, not the ${scheduler} one`);
    const nodeIds = new Set(plan.nodes.map((n) => n.uuid));
    const allocIds = new Set([...plan.bound.values(), ...plan.loose].map((a) => a.uuid));
    const strangers = [
      ...[...survey.nodes].filter((u) => !nodeIds.has(u)).map((u) => `node ${u}`),
      ...[...survey.allocations].filter((u) => !allocIds.has(u)).map((u) => `allocation ${u}`),
    ];
    if (strangers.length)
      throw new Error(`table ${table} holds what the earlier import from ${earlier.source} did not write: ${some(strangers, 10)}`);
    // what the earlier pass wrote must be what this one would write: Ironic frozen meanwhile
    const stored = await imp.storedRecords(survey.nodes, survey.allocations);
    const nodeFields = [...Object.keys(NODE_FIELDS_FROM_IRONIC), 'vifs'];
    const allocFields = Object.keys(ALLOCATION_FIELDS_FROM_IRONIC);
    const changed: string[] = [];
    for (const n of plan.nodes) {
      const s = stored.nodes.get(n.uuid);
      if (!s) continue;
      const diff = recordChanges(s as unknown as Record<string, unknown>, n as unknown as Record<string, unknown>, nodeFields);
      const a = plan.bound.get(n.uuid);
      if (a && !stored.allocations.has(a.uuid)) diff.push(`allocation ${a.uuid}`);
      if (diff.length) changed.push(`node ${n.uuid}: ${diff.join(', ')}`);
    }
    for (const a of [...plan.bound.values(), ...plan.loose]) {
      const s = stored.allocations.get(a.uuid);
      const diff = s ? recordChanges(s as unknown as Record<string, unknown>, a as unknown as Record<string, unknown>, allocFields) : [];
      if (diff.length) changed.push(`allocation ${a.uuid}: ${diff.join(', ')}`);
    }
    if (changed.length) {
      err(
        `[import-ironic] refused, nothing written: the table differs from what Ironic holds now (Ironic changed since the earlier pass of ${earlier.startedAt} — was it frozen? — or Berth was written since); start again on a table without bare metal:`,
      );
      for (const c of changed) err(`  ${c}`);
      return 1;
    }
    skipNodes = new Set(survey.nodes);
    skipAllocations = new Set(survey.allocations);
  }
  const todoNodes = plan.nodes.filter((n) => !skipNodes.has(n.uuid));
  const todoLoose = plan.loose.filter((a) => !skipAllocations.has(a.uuid));
  const withAllocation = todoNodes.filter((n) => plan.bound.has(n.uuid)).length;
  const already = plan.nodes.length - todoNodes.length;
  out(
    `[import-ironic] into table ${table} (${scheduler} scheduler): ${todoNodes.length} nodes to write (${withAllocation} with their active allocation), ${todoLoose.length} allocations bound to no node${already ? `; ${already} nodes and ${plan.loose.length - todoLoose.length} allocations already imported by an earlier pass` : ''}`,
  );
  if (opts.dryRun) {
    reportNotCarried(plan, scheduler);
    out('[import-ironic] --dry-run: nothing written');
    return 0;
  }

  // ---- the writes
  const started = new Date().toISOString();
  if (!earlier) await imp.writeImportState({ source: api.endpoint, scheduler, version: `1.${api.minor}`, startedAt: started });
  const bar = progressBar('[import-ironic] written');
  const total = todoNodes.length + todoLoose.length;
  let done = 0;
  bar.update(0, total);
  const failures: string[] = [];
  const explain = (w: Exclude<Awaited<ReturnType<typeof imp.importNode>>, { ok: true }>) =>
    'reason' in w ? `Placement refused it (${w.reason})` : `${w.error.replace(/_/g, ' ')}: somebody else wrote it meanwhile`;
  // what follows each node: the scheduler chosen above (the placement scheduler: its provider and consumer)
  const { links } = (await import('../functions/bridge/scheduler.js')).scheduler();
  const w0 = performance.now();
  await pool(todoNodes, concurrency, async (n) => {
    const w = await imp.importNode(n, links, plan.bound.get(n.uuid));
    if ('error' in w) failures.push(`node ${n.uuid}: ${explain(w)}`);
    bar.update(++done, total);
    opts.onWritten?.(done);
  });
  const nodeSecs = (performance.now() - w0) / 1000;
  const a0 = performance.now();
  await pool(todoLoose, concurrency, async (a) => {
    const w = await imp.importAllocation(a);
    if ('error' in w) failures.push(`allocation ${a.uuid}: ${explain(w)}`);
    bar.update(++done, total);
    opts.onWritten?.(done);
  });
  const allocSecs = (performance.now() - a0) / 1000;
  bar.finish();
  if (failures.length) {
    err(`[import-ironic] ${failures.length} write(s) failed (the rest is written; run the import again once the cause is gone):`);
    for (const f of failures) err(`  ${f}`);
    return 1;
  }
  const first = earlier ?? { source: api.endpoint, scheduler, version: `1.${api.minor}`, startedAt: started };
  await imp.writeImportState({
    ...first,
    nodes: plan.nodes.length,
    allocations: plan.bound.size + plan.loose.length,
    completedAt: new Date().toISOString(),
  });
  const rate = (n: number, s: number) => (s > 0 ? `${(n / s).toFixed(1)}/s` : '-');
  out(
    `[import-ironic] imported ${todoNodes.length} nodes (${withAllocation} with their allocation: ${rate(todoNodes.length, nodeSecs)} nodes in ${nodeSecs.toFixed(1)} s) and ${todoLoose.length} allocations bound to no node (${rate(todoLoose.length, allocSecs)} in ${allocSecs.toFixed(1)} s); ${((performance.now() - t0) / 1000).toFixed(1)} s in all, reading included`,
  );
  if (scheduler === 'placement')
    out('[import-ironic] placement scheduler: every node is its resource provider, every active allocation its Placement consumer');
  reportNotCarried(plan, scheduler);
  out(`[import-ironic] next: npx berth verify-ironic --from ${api.endpoint}`);
  return 0;
}

function reportNotCarried(plan: Plan, scheduler: string): void {
  const lines = [...plan.notCarried].map(([kind, uuids]) => `  ${kind}: ${uuids.length} (${some(uuids, 3)})`);
  if (scheduler === 'placement') {
    const unowned = [...plan.bound.values()].filter((a) => !a.owner).map((a) => a.uuid);
    if (unowned.length)
      lines.push(
        `  active allocations without an owner: their Placement consumer belongs to the incomplete-consumer project and user (Ironic does not record who created an allocation): ${unowned.length} (${some(unowned, 3)})`,
      );
  }
  if (lines.length) out(`[import-ironic] not carried:\n${lines.join('\n')}`);
}
