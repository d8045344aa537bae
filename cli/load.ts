/**
 * `berth load FILE`: bulk-load resource providers from a YAML or JSON file into an empty
 * (or offline) deployment through the store's bulk loader (functions/store/placement/bulk.ts:
 * BatchWriteItem, not conditioned — read its comment), with a progress bar.
 *
 * The file (YAML or JSON; a bare list is taken as `providers`):
 *
 *   resource_classes: [CUSTOM_FPGA]        # custom names are created first (if missing)
 *   traits: [CUSTOM_GOLD]
 *   providers:
 *     - name: compute-1                    # uuid optional (generated)
 *       uuid: 8a1c…
 *       inventories:
 *         VCPU: 32                         # a total, or the inventory's fields
 *         MEMORY_MB: {total: 131072, reserved: 2048, allocation_ratio: 1.5}
 *       traits: [HW_CPU_X86_AVX2, CUSTOM_GOLD]
 *       aggregates: [5a3b…]
 *       children:                          # nested providers (their parent is this one)
 *         - name: compute-1-numa0
 *           inventories: {VCPU: 16}
 *     - name: compute-1-gpu
 *       parent: compute-1                  # or a parent by uuid or name, earlier in the file
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import * as z from 'zod';
import type { BulkProvider } from '../functions/store/placement/bulk.js';
import { progressBar } from './progress.js';
import { berthSchema, meterBatchWrites, sdkStack, type BatchWriteUnits } from './batch-write-units.js';
import { commandErrors } from './flags.js';
import { commandLine } from '../scripts/args.js';

/** the loader's rate and the write units per provider it cost (units by AWS's rules, from the items written) */
export function loadReport(providers: number, seconds: number, u: BatchWriteUnits, concurrency: number): string {
  const per = (x: number) => (providers ? x / providers : 0).toFixed(2);
  return (
    `[berth load] ${(providers / Math.max(seconds, 1e-9)).toFixed(0)} providers/s (${seconds.toFixed(1)} s, ${concurrency} BatchWriteItem calls in flight); ` +
    `${per(u.write + u.indexWrite)} write units per provider (table ${per(u.write)}, gsi1 ${per(u.indexWrite)}; ${u.items} items, ${(u.bytes / 1e6).toFixed(1)} MB in ${u.calls} calls)`
  );
}

const UUID = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/;
const NAME = /^[A-Z0-9_]+$/;

const inventory = z.union([
  z.int().min(1),
  z.strictObject({
    total: z.int().min(1),
    reserved: z.int().min(0).optional(),
    min_unit: z.int().min(1).optional(),
    max_unit: z.int().min(1).optional(),
    step_size: z.int().min(1).optional(),
    allocation_ratio: z.number().positive().optional(),
  }),
]);

interface FileProvider {
  name: string;
  uuid?: string;
  parent?: string;
  inventories?: Record<string, z.infer<typeof inventory>>;
  traits?: string[];
  aggregates?: string[];
  children?: FileProvider[];
}

const provider: z.ZodType<FileProvider> = z.lazy(() =>
  z.strictObject({
    name: z.string().min(1).max(200),
    uuid: z.string().regex(UUID, 'not a uuid').optional(),
    parent: z.string().min(1).optional(),
    inventories: z.record(z.string().regex(NAME, 'not a resource class name'), inventory).optional(),
    traits: z.array(z.string().regex(NAME, 'not a trait name')).optional(),
    aggregates: z.array(z.string().regex(UUID, 'not a uuid')).optional(),
    children: z.array(provider).optional(),
  }),
);

export const loadFile = z.strictObject({
  resource_classes: z.array(z.string().regex(/^CUSTOM_[A-Z0-9_]+$/, 'custom resource classes start with CUSTOM_')).optional(),
  traits: z.array(z.string().regex(/^CUSTOM_[A-Z0-9_]+$/, 'custom traits start with CUSTOM_')).optional(),
  providers: z.array(provider),
});
export type LoadFile = z.infer<typeof loadFile>;

/** Parse and validate a load file (YAML is a superset of JSON: one parser for both). */
export function readLoadFile(path: string): LoadFile {
  const raw = parseYaml(readFileSync(path, 'utf8'));
  const doc = Array.isArray(raw) ? { providers: raw } : raw;
  const r = loadFile.safeParse(doc);
  if (!r.success) {
    const first = r.error.issues.slice(0, 5).map((i) => `  ${i.path.join('.') || '(top)'}: ${i.message}`);
    throw new Error(`${path} is not a valid load file:\n${first.join('\n')}`);
  }
  return r.data;
}

const normUuid = (u: string) => {
  const h = u.replace(/-/g, '').toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

/** Flatten the (nested) providers depth-first, parents first, resolving parents given by name. */
export function flatten(file: LoadFile): BulkProvider[] {
  const out: BulkProvider[] = [];
  const byName = new Map<string, string>();
  const uuids = new Set<string>();
  const visit = (p: FileProvider, parentUuid: string | undefined) => {
    const uuid = p.uuid ? normUuid(p.uuid) : randomUUID();
    let parent = parentUuid;
    if (p.parent !== undefined) {
      if (parentUuid) throw new Error(`provider ${p.name}: nested under a parent and names another (${p.parent})`);
      parent = UUID.test(p.parent) && uuids.has(normUuid(p.parent)) ? normUuid(p.parent) : byName.get(p.parent);
      if (!parent) throw new Error(`provider ${p.name}: parent ${p.parent} must be a provider earlier in the file`);
    }
    const inventories: BulkProvider['inventories'] = {};
    for (const [rc, inv] of Object.entries(p.inventories ?? {})) inventories[rc] = typeof inv === 'number' ? { total: inv } : inv;
    out.push({ uuid, name: p.name, parent, inventories, traits: p.traits, aggregates: p.aggregates?.map(normUuid) });
    byName.set(p.name, uuid);
    uuids.add(uuid);
    for (const c of p.children ?? []) visit(c, uuid);
  };
  for (const p of file.providers) visit(p, undefined);
  return out;
}

export async function loadCommand(args: string[]): Promise<number> {
  const { positionals, values } = commandLine(args, { concurrency: { type: 'string' }, force: { type: 'boolean' } }, commandErrors('load'), 1);
  const [file] = positionals;
  if (!file) throw new Error('usage: berth load FILE [--concurrency N] [--force]');
  const concurrency = values.concurrency !== undefined ? Number(values.concurrency) : undefined;
  const force = values.force === true;
  const doc = readLoadFile(file);
  const providers = flatten(doc);
  const { bulkLoadProviders, BulkInputError, bulkRecords } = await import('../functions/store/placement/bulk.js');
  const { createCustomResourceClass } = await import('../functions/store/placement/resource-classes.js');
  const { createCustomTrait } = await import('../functions/store/placement/traits.js');
  const { snapshot } = await import('../functions/store/placement/snapshot.js');
  try {
    bulkRecords(providers); // input checks first: nothing is written for a bad file
  } catch (e) {
    if (e instanceof BulkInputError) throw new Error(`${file}: ${e.message}`);
    throw e;
  }
  // the bulk loader overwrites silently: refuse names or uuids the table already has
  const forest = await snapshot().fresh();
  const names = new Set(forest.all().map((p) => p.name));
  const clash = providers.filter((p) => forest.get(p.uuid) || names.has(p.name));
  if (clash.length && !force) {
    throw new Error(
      `${clash.length} provider(s) already exist (e.g. ${clash[0]!.name} / ${clash[0]!.uuid}); the bulk loader would overwrite them — use the API, or --force`,
    );
  }
  let created = 0;
  for (const rc of doc.resource_classes ?? []) if (await createCustomResourceClass(rc)) created++;
  for (const t of doc.traits ?? []) if ((await createCustomTrait(t)).created) created++;
  // the write units AWS would bill for what the loader writes, from the items themselves
  // (functions/store/ddb/units.ts, the accountant's rules: each put a new item, its gsi1 entry too)
  const { ddbRaw, tableName } = await import('../functions/store/ddb/client.js');
  const schema = berthSchema(tableName());
  const units = meterBatchWrites(sdkStack(ddbRaw()), (t) => (t === schema.name ? schema : undefined));
  const bar = progressBar('[berth load] providers');
  bar.update(0, providers.length);
  try {
    const t0 = performance.now();
    const r = await bulkLoadProviders(providers, { concurrency, onProgress: (done, total) => bar.update(done, total) });
    const secs = (performance.now() - t0) / 1000;
    const loaded = { ...units };
    bar.finish(`${r.batches} batches, ${r.retries} retries${created ? `, ${created} custom name(s) created` : ''}`);
    process.stdout.write(`[berth load] loaded ${r.providers} providers from ${file}\n`);
    process.stdout.write(`${loadReport(r.providers, secs, loaded, concurrency ?? 32)}\n`);
    // running APIs catch up with the load from this image instead of re-reading every provider
    const { imageAfterBulkLoad } = await import('../functions/store/placement/bulk-image.js');
    const i0 = performance.now();
    const img = await imageAfterBulkLoad(r);
    const kind = img.manifest.base
      ? `a delta of ${(img.manifest.bytes / 1e6).toFixed(1)} MB to the image of ${(img.manifest.base.bytes / 1e6).toFixed(1)} MB before`
      : `${(img.manifest.bytes / 1e6).toFixed(1)} MB`;
    const imageUnits = units.write + units.indexWrite - loaded.write - loaded.indexWrite;
    process.stdout.write(
      `[berth load] forest image of ${img.manifest.providers} providers written (${kind}) in ${((performance.now() - i0) / 1000).toFixed(1)} s, ${Math.round(imageUnits)} write units\n`,
    );
    return 0;
  } catch (e) {
    if (e instanceof BulkInputError) throw new Error(`${file}: ${e.message}`);
    throw e;
  }
}
