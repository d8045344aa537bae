/**
 * Whole-table export and import for the operators' tool (`berth export` / `berth import`).
 *
 * Items travel in DynamoDB's own JSON (AttributeValue maps: {"S": …}, {"N": "…"}, …), so
 * a dump is lossless whatever an item holds (numbers keep their digits; binary values
 * become base64 strings). Change-log items (`LOG#…`, transient, TTL one day) are not
 * exported: an import writes fresh ones naming every imported provider instead, so a
 * running API whose provider snapshot is warm sees the imported forest at once.
 * Transaction markers and fences (`TX#…`, `BMTX#…`, store/ddb/tx.ts; TTL one day), the
 * request budgets of `RATE_LIMIT` (`RATE#…`) and the change feed's items (`FEED#…`,
 * `FEEDPART#…`, store/ddb/feed.ts; TTL two days: the stream processor has published them)
 * are transient too and stay behind. The allocation history (`HIST…`) is exported with the rest.
 *
 * Import is for an EMPTY table only (a restore, a move between accounts or from
 * DynamoDB Local to AWS): it uses BatchWriteItem, which has no conditions, so it is
 * refused when the table holds any item other than change-log entries (and its layout
 * record). The dump's layout record comes with it; a dump of a release before layout
 * records (layout 1) has none, and the table is classified on first contact
 * (store/layout/state.ts): a layout-1 dump migrates online like a layout-1 table.
 */
import { type AttributeValue, DeleteItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { LAYOUT } from '../../core/layout.js';
import { forgetLayout, layoutKey } from '../layout/state.js';
import { announceLate, logItemNaming } from './changelog.js';
import { BATCH_WRITE_MAX, batchPut } from '../ddb/batch.js';
import { ddbRaw, tableName } from '../ddb/client.js';

export type RawItem = Record<string, AttributeValue>;
/** An item as written to a dump file: AttributeValues, binary as base64 */
export type DumpItem = Record<string, unknown>;

/**
 * change-log entries, transaction markers, request budgets (`RATE#…`, store/ratelimit.ts;
 * TTL an hour) and feed items: transient, never exported, ignored by the emptiness check
 */
const isLog = (item: RawItem) => /^(LOG|TX|BMTX|RATE|FEED|FEEDPART)#/.test(item.pk?.S ?? '');
/** the table's layout record (store/layout/state.ts): travels with the items it describes */
const isLayoutRecord = (item: RawItem) => item.pk?.S === layoutKey().pk && item.sk?.S === layoutKey().sk;

function encode(v: AttributeValue): unknown {
  if (v.B !== undefined) return { B: Buffer.from(v.B).toString('base64') };
  if (v.BS !== undefined) return { BS: v.BS.map((b) => Buffer.from(b).toString('base64')) };
  if (v.M !== undefined) return { M: Object.fromEntries(Object.entries(v.M).map(([k, x]) => [k, encode(x)])) };
  if (v.L !== undefined) return { L: v.L.map(encode) };
  return v;
}

// biome-ignore lint/suspicious/noExplicitAny: a dump file is JSON whose shape is checked field by field here
function decode(v: any): AttributeValue {
  if (v && typeof v === 'object') {
    if (typeof v.B === 'string') return { B: Buffer.from(v.B, 'base64') };
    if (Array.isArray(v.BS)) return { BS: v.BS.map((b: string) => Buffer.from(b, 'base64')) };
    if (v.M && typeof v.M === 'object') return { M: Object.fromEntries(Object.entries(v.M).map(([k, x]) => [k, decode(x)])) };
    if (Array.isArray(v.L)) return { L: v.L.map(decode) };
  }
  return v as AttributeValue;
}

export function toDumpItem(item: RawItem): DumpItem {
  return Object.fromEntries(Object.entries(item).map(([k, v]) => [k, encode(v)]));
}

export function fromDumpItem(item: DumpItem): RawItem {
  const out = Object.fromEntries(Object.entries(item).map(([k, v]) => [k, decode(v)]));
  if (typeof out.pk?.S !== 'string' || typeof out.sk?.S !== 'string')
    throw new Error(`not a table item (pk/sk missing): ${JSON.stringify(item).slice(0, 200)}`);
  return out;
}

/** Every item but change-log entries and transaction markers, page by page (strongly consistent scan). */
export async function* exportItems(): AsyncGenerator<RawItem[]> {
  let start: Record<string, AttributeValue> | undefined;
  do {
    const r = await ddbRaw().send(new ScanCommand({ TableName: tableName(), ConsistentRead: true, ExclusiveStartKey: start }));
    const page = (r.Items ?? []).filter((i) => !isLog(i));
    if (page.length) yield page;
    start = r.LastEvaluatedKey;
  } while (start);
}

/** True when the table holds nothing but change-log entries, transaction markers and its layout record. */
export async function tableIsEmpty(): Promise<boolean> {
  let start: Record<string, AttributeValue> | undefined;
  do {
    const r = await ddbRaw().send(
      new ScanCommand({ TableName: tableName(), ConsistentRead: true, ExclusiveStartKey: start, Limit: 100, ProjectionExpression: 'pk, sk' }),
    );
    // a layout record alone (written on first contact with an empty table) is no content
    if ((r.Items ?? []).some((i) => !isLog(i) && !isLayoutRecord(i))) return false;
    start = r.LastEvaluatedKey;
  } while (start);
  return true;
}

export interface ImportResult {
  items: number;
  providers: number;
  retries: number;
}

export class ImportRefused extends Error {}

/** Write `items` (from a dump) into an empty table; see the module comment. */
export async function importItems(
  items: RawItem[],
  opts: { concurrency?: number; onProgress?: (written: number, total: number) => void } = {},
): Promise<ImportResult> {
  if (!(await tableIsEmpty())) throw new ImportRefused(`table ${tableName()} is not empty: import restores into an empty table only`);
  // the dump's layout (its record, or none: a table of a release before layout records,
  // which the first contact classifies) replaces whatever record the empty table has
  const record = items.find(isLayoutRecord);
  const version = Number(record?.version?.N ?? 0);
  if (version > LAYOUT)
    throw new ImportRefused(`the dump holds item layout ${version}, newer than this release writes (${LAYOUT}): import it with that release`);
  if (!record) await ddbRaw().send(new DeleteItemCommand({ TableName: tableName(), Key: { pk: { S: layoutKey().pk }, sk: { S: layoutKey().sk } } }));
  const keys = new Set<string>();
  for (const i of items) {
    const k = `${i.pk!.S}\u0000${i.sk!.S}`;
    if (keys.has(k)) throw new ImportRefused(`duplicate item ${i.pk!.S} / ${i.sk!.S} in the dump`);
    keys.add(k);
  }
  const state = items.filter((i) => !isLog(i));
  const batches: RawItem[][] = [];
  for (let i = 0; i < state.length; i += BATCH_WRITE_MAX) batches.push(state.slice(i, i + BATCH_WRITE_MAX));
  let next = 0;
  let written = 0;
  let retries = 0;
  const worker = async () => {
    while (next < batches.length) {
      const b = batches[next++]!;
      retries += await batchPut(b, { raw: true });
      written += b.length;
      opts.onProgress?.(written, state.length);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 4) }, worker));
  // change-log entries naming the imported providers, so warm snapshots pick them up
  const providers = state.filter((i) => i.sk!.S === 'RP' && i.pk!.S!.startsWith('RP#')).map((i) => i.pk!.S!.slice(3));
  const logs: Record<string, unknown>[] = [];
  for (let i = 0; i < providers.length; i += 100) logs.push(logItemNaming(providers.slice(i, i + 100)));
  for (let i = 0; i < logs.length; i += BATCH_WRITE_MAX) {
    const batch = logs.slice(i, i + BATCH_WRITE_MAX);
    retries += await batchPut(batch);
    // entries stored late (throttled, retried) are announced again, as a late transaction's are
    await announceLate(batch, batchPut);
  }
  forgetLayout();
  return { items: state.length, providers: providers.length, retries };
}
