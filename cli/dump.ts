/**
 * `berth export [FILE|-]`, `berth import FILE`, `berth import-legacy FILE`.
 *
 * export: every item of the table but the transient change log, in DynamoDB JSON
 *         (functions/store/placement/dump.ts), as {"format":"berth-dump","version":1,…,"items":[…]}
 *         with one item per line; FILE `-` (default) is stdout.
 * import: such a dump into an EMPTY table (refused otherwise), with a progress bar; then
 *         change-log entries for the imported providers (running APIs see them at once).
 * import-legacy: allocations of a pre-1.8 Placement (no consumer records), YAML or JSON:
 *         [{consumer: <uuid>, allocations: {<rp uuid>: {resources: {VCPU: 1}}}}, …]
 *         (`allocations` as GET /allocations/{consumer} shows them; `{VCPU: 1}` without
 *         `resources` also works). Written by importLegacyAllocations; then run
 *         `berth migrate-consumers` (or let the maintenance function do it).
 */
import { createWriteStream, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import * as z from 'zod';
import { progressBar } from './progress.js';
import { commandErrors } from './flags.js';
import { commandLine } from '../scripts/args.js';

export const DUMP_FORMAT = 'berth-dump';

export async function exportCommand(args: string[]): Promise<number> {
  const [file = '-'] = commandLine(args, {}, commandErrors('export'), 1).positionals;
  const { exportItems, toDumpItem } = await import('../functions/store/placement/dump.js');
  const { tableName } = await import('../functions/store/ddb/client.js');
  const out = file === '-' ? process.stdout : createWriteStream(file);
  let failed: Error | undefined;
  out.once('error', (e) => (failed = e));
  const write = (s: string) =>
    new Promise<void>((res, rej) => {
      if (failed) return rej(failed);
      if (out.write(s)) res();
      else out.once('drain', res);
    });
  await write(`{"format":"${DUMP_FORMAT}","version":1,"table":${JSON.stringify(tableName())},"exportedAt":"${new Date().toISOString()}","items":[\n`);
  let n = 0;
  for await (const page of exportItems()) {
    for (const item of page) await write(`${n++ ? ',\n' : ''}${JSON.stringify(toDumpItem(item))}`);
    if (file !== '-') process.stderr.write(`\r[berth export] ${n} items`);
  }
  await write(`\n]}\n`);
  if (file !== '-') {
    await new Promise<void>((res) => (out as ReturnType<typeof createWriteStream>).end(res));
    process.stderr.write(`\r[berth export] ${n} items written to ${file}\n`);
  }
  return 0;
}

export async function importCommand(args: string[]): Promise<number> {
  const [file] = commandLine(args, {}, commandErrors('import'), 1).positionals;
  if (!file) throw new Error('usage: berth import FILE');
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  if (doc?.format !== DUMP_FORMAT || doc.version !== 1 || !Array.isArray(doc.items))
    throw new Error(`${file} is not a berth dump (format ${DUMP_FORMAT}, version 1)`);
  const { fromDumpItem, importItems } = await import('../functions/store/placement/dump.js');
  const items = doc.items.map(fromDumpItem);
  const bar = progressBar('[berth import] items');
  const r = await importItems(items, { onProgress: (done, total) => bar.update(done, total) });
  bar.finish(`${r.retries} retries`);
  process.stdout.write(
    `[berth import] imported ${r.items} items (${r.providers} providers) from ${file} (exported from table ${doc.table} at ${doc.exportedAt})\n`,
  );
  return 0;
}

const resources = z.record(z.string().regex(/^[A-Z0-9_]+$/), z.int().min(1));
const legacyFile = z.array(
  z.strictObject({
    consumer: z.string().regex(/^[0-9a-fA-F-]{36}$/, 'not a uuid'),
    allocations: z.record(z.string().regex(/^[0-9a-fA-F-]{36}$/, 'not a uuid'), z.union([z.strictObject({ resources }), resources])),
  }),
);

export async function importLegacyCommand(args: string[]): Promise<number> {
  const [file] = commandLine(args, {}, commandErrors('import-legacy'), 1).positionals;
  if (!file) throw new Error('usage: berth import-legacy FILE');
  const raw = parseYaml(readFileSync(file, 'utf8'));
  const r = legacyFile.safeParse(Array.isArray(raw) ? raw : raw?.consumers);
  if (!r.success)
    throw new Error(
      `${file} is not a legacy allocation file:\n${r.error.issues
        .slice(0, 5)
        .map((i) => `  ${i.path.join('.')}: ${i.message}`)
        .join('\n')}`,
    );
  const consumers = r.data.map((c) => ({
    uuid: c.consumer.toLowerCase(),
    allocations: Object.fromEntries(
      Object.entries(c.allocations).map(([rp, a]) => [
        rp.toLowerCase(),
        'resources' in a && typeof a.resources === 'object' ? a.resources : (a as Record<string, number>),
      ]),
    ),
  }));
  const { importLegacyAllocations } = await import('../functions/store/placement/allocations.js');
  process.stderr.write(`[berth import-legacy] raising the legacy flag and waiting for running APIs to notice (LEGACY_FLAG_TTL_MS)…\n`);
  const t0 = Date.now();
  await importLegacyAllocations(consumers);
  process.stdout.write(
    `[berth import-legacy] imported the allocations of ${consumers.length} consumer(s) in ${((Date.now() - t0) / 1000).toFixed(1)} s; now run \`berth migrate-consumers\`\n`,
  );
  return 0;
}
