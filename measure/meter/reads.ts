/**
 * The meter's reads: each successful read billed on the items DynamoDB evaluated, not on
 * what a projection or a filter left. GetItem and TransactGetItems per item (rounded one
 * by one; a projected item is sized from its stored image); BatchGetItem per item asked,
 * missing items included; a Query or Scan page summed then rounded, read again without
 * its filter or projection (a side call, not billed) when it had one.
 */
import type { IncomingMessage } from 'node:http';
import { decodeAttribution, ACCT_HEADER } from '../../local/attribution.js';
import type { Json } from '../../local/ddb-upstream.js';
import { batchGetUnits, itemReadUnits, itemSize, keyText, queryPageUnits, type ReadMode, type WireItem } from '../../functions/store/ddb/units.js';
import type { KeyUse } from '../ledger.js';
import type { MeterContext } from './images.js';

/** the names and values an expression uses (to keep only those in a side query) */
function used(expr: string | undefined, prefix: '#' | ':'): Set<string> {
  const out = new Set<string>();
  if (!expr) return out;
  const re = prefix === '#' ? /#[A-Za-z0-9_]+/g : /:[A-Za-z0-9_]+/g;
  for (const m of expr.matchAll(re)) out.add(m[0]);
  return out;
}

function pick<T>(obj: Record<string, T> | undefined, keys: Set<string>): Record<string, T> | undefined {
  if (!obj) return undefined;
  const out = Object.fromEntries(Object.entries(obj).filter(([k]) => keys.has(k)));
  return Object.keys(out).length ? out : undefined;
}

/** the partition key value a Query's key condition names (`pk = :v`, `#n = :v`) */
function queryPk(input: Json, pkName: string): string | undefined {
  const expr = String(input.KeyConditionExpression ?? '');
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as WireItem;
  for (const m of expr.matchAll(/([#A-Za-z0-9_]+)\s*=\s*(:[A-Za-z0-9_]+)/g)) {
    const attr = m[1]!.startsWith('#') ? names[m[1]!] : m[1];
    if (attr === pkName) return keyText(values[m[2]!]);
  }
  return undefined;
}

/** Bill a read that succeeded: on the items DynamoDB evaluated. */
export async function billRead(ctx: MeterContext, req: IncomingMessage, op: string, input: Json, out: Json, t: number): Promise<void> {
  const { images } = ctx;
  const who = decodeAttribution(req.headers[ACCT_HEADER]);
  const end = Date.now();
  if (op === 'GetItem' || op === 'TransactGetItems') {
    const gets =
      op === 'GetItem'
        ? [
            {
              table: String(input.TableName),
              key: input.Key as WireItem,
              item: out.Item as WireItem | undefined,
              projected: !!(input.ProjectionExpression || input.AttributesToGet),
            },
          ]
        : ((input.TransactItems ?? []) as Json[]).map((it, i) => {
            const g = (it.Get ?? {}) as Json;
            const resp = ((out.Responses ?? []) as Json[])[i];
            return {
              table: String(g.TableName),
              key: g.Key as WireItem,
              item: resp?.Item as WireItem | undefined,
              projected: !!g.ProjectionExpression,
            };
          });
    const mode: ReadMode = op === 'TransactGetItems' ? 'transactional' : input.ConsistentRead === true ? 'strong' : 'eventual';
    const keys: KeyUse[] = [];
    let read = 0;
    for (const g of gets) {
      const schema = await images.schemaOf(req, g.table);
      let item = g.item ?? null;
      if (item && g.projected) item = (await images.fetchImages(req, schema, [g.key])).get(images.idOf(schema, g.key)) ?? item;
      const bytes = itemSize(item);
      const units = itemReadUnits(bytes, mode);
      read += units;
      keys.push({
        space: 'table',
        pk: keyText(g.key[schema.pk]),
        ...(schema.sk ? { sk: keyText(g.key[schema.sk]) } : {}),
        read: units,
        write: 0,
        bytes,
        items: item ? 1 : 0,
      });
    }
    ctx.record({ t, end, op, table: gets[0]?.table ?? '', mode, who, outcome: 'ok', read, write: 0, indexWrite: 0, keys });
    return;
  }
  if (op === 'BatchGetItem') {
    const keys: KeyUse[] = [];
    let read = 0;
    let mode: ReadMode = 'eventual';
    let firstTable = '';
    const unprocessed = (out.UnprocessedKeys ?? {}) as Record<string, { Keys?: WireItem[] }>;
    for (const [table, spec] of Object.entries((input.RequestItems ?? {}) as Record<string, Json>)) {
      firstTable ||= table;
      const schema = await images.schemaOf(req, table);
      const m: ReadMode = spec.ConsistentRead === true ? 'strong' : 'eventual';
      if (m === 'strong') mode = 'strong';
      const skipped = new Set((unprocessed[table]?.Keys ?? []).map((k) => images.idOf(schema, k)));
      const asked = ((spec.Keys ?? []) as WireItem[]).filter((k) => !skipped.has(images.idOf(schema, k)));
      const got = new Map<string, WireItem>();
      for (const it of ((out.Responses ?? {}) as Record<string, WireItem[]>)[table] ?? []) got.set(images.idOf(schema, it), it);
      if (spec.ProjectionExpression || spec.AttributesToGet) {
        // the projected items may lack their keys: size what is stored under every key asked
        got.clear();
        for (const [id, img] of await images.fetchImages(req, schema, asked)) if (img) got.set(id, img);
      }
      for (const k of asked) {
        const item = got.get(images.idOf(schema, k)) ?? null;
        const bytes = itemSize(item);
        const units = batchGetUnits([item ? bytes : null], m);
        read += units;
        keys.push({
          space: 'table',
          pk: keyText(k[schema.pk]),
          ...(schema.sk ? { sk: keyText(k[schema.sk]) } : {}),
          read: units,
          write: 0,
          bytes,
          items: item ? 1 : 0,
        });
      }
    }
    ctx.record({ t, end, op, table: firstTable, mode, who, outcome: 'ok', read, write: 0, indexWrite: 0, keys });
    return;
  }
  // Query / Scan: one page
  const table = String(input.TableName);
  const schema = await images.schemaOf(req, table);
  const index = input.IndexName ? schema.indexes.find((g) => g.name === input.IndexName) : undefined;
  const mode: Exclude<ReadMode, 'transactional'> = input.ConsistentRead === true ? 'strong' : 'eventual';
  let items = (out.Items ?? []) as WireItem[];
  const select = input.Select as string | undefined;
  const narrowed =
    !!input.FilterExpression ||
    !!input.ProjectionExpression ||
    !!input.AttributesToGet ||
    (!!select && select !== 'ALL_ATTRIBUTES' && select !== 'ALL_PROJECTED_ATTRIBUTES');
  if (narrowed) {
    // the same page without filter or projection: what DynamoDB evaluated
    const keep = (s: string | undefined) => s;
    const names = used(keep(input.KeyConditionExpression as string | undefined), '#');
    const values = used(keep(input.KeyConditionExpression as string | undefined), ':');
    const side: Json = {
      TableName: table,
      ...(input.IndexName ? { IndexName: input.IndexName } : {}),
      ...(input.KeyConditionExpression ? { KeyConditionExpression: input.KeyConditionExpression } : {}),
      ...(input.ExclusiveStartKey ? { ExclusiveStartKey: input.ExclusiveStartKey } : {}),
      ...(input.Limit !== undefined ? { Limit: input.Limit } : {}),
      ...(input.ScanIndexForward !== undefined ? { ScanIndexForward: input.ScanIndexForward } : {}),
      ...(input.ConsistentRead !== undefined ? { ConsistentRead: input.ConsistentRead } : {}),
      ...(input.Segment !== undefined ? { Segment: input.Segment, TotalSegments: input.TotalSegments } : {}),
    };
    const n = pick(input.ExpressionAttributeNames as Record<string, string> | undefined, names);
    const v = pick(input.ExpressionAttributeValues as Record<string, WireItem> | undefined, values);
    if (n) side.ExpressionAttributeNames = n;
    if (v) side.ExpressionAttributeValues = v;
    try {
      items = ((await images.call(req, op, side)).Items ?? []) as WireItem[];
    } catch {
      // billed on what was returned (an underestimate) rather than failing the caller
    }
  }
  const bytes = items.reduce((n, it) => n + itemSize(it), 0);
  const units = queryPageUnits(bytes, mode);
  const pkName = index ? index.pk : schema.pk;
  const pk = op === 'Query' ? (queryPk(input, pkName) ?? (items[0] ? keyText(items[0][pkName]) : '?')) : '(scan)';
  ctx.record({
    t,
    end,
    op,
    table,
    index: index?.name,
    mode,
    who,
    outcome: 'ok',
    read: units,
    write: 0,
    indexWrite: 0,
    keys: [{ space: index?.name ?? 'table', pk, read: units, write: 0, bytes, items: items.length }],
  });
}
