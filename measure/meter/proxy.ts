/**
 * The metering DynamoDB proxy: an HTTP proxy between the handlers (the AWS SDK, pointed at
 * it) and a DynamoDB endpoint that does not check signatures (DynamoDB Local, LocalStack).
 * It forwards every call unchanged and records it (./ddb-ledger.ts): operation, table or
 * index, consistency, the partition and sort keys touched, item sizes, and the read and
 * write units AWS would bill by its documented rules (./ddb-units.ts: Query pages summed
 * then rounded, BatchGetItem items rounded one by one, missing items, transactions x2,
 * ConditionCheck, failed conditional writes, every global secondary index write).
 *
 * Write units need each written item's image before and after the write. Like the lag
 * simulation (./ddb-lag.ts) the proxy forwards writes one at a time and keeps a shadow of
 * every item it has seen written: the image before a write is the shadow's (read with a
 * consistent BatchGetItem the first time a key is met), the image after it is the Put's
 * item, nothing for a Delete, and a consistent read after an Update. So a Query or
 * BatchGet billed on what it returned and a write billed on its images both follow
 * "whatever the code does", whatever the item layout.
 *
 * Reads are billed on the items DynamoDB evaluated, not on what a projection or a filter
 * left: a read with a ProjectionExpression, a FilterExpression or Select is read again
 * without them (a side call, not billed) to size what was evaluated.
 *
 * Who made a call: the local containers (./container.ts) add an `x-berth-acct` header
 * naming the container, the request and its type; calls without one are recorded as
 * unattributed. Calls carrying `x-berth-side-call` (the fault injector's own reads) are
 * forwarded and not recorded. Composable with the fault injector: handlers -> fault
 * injector -> meter -> DynamoDB (./start.ts), so the meter sees what reached DynamoDB.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Lock, readRequest, reply, upstreamClient, type Json, type Upstream } from '../../local/ddb-upstream.js';
import { closeServers } from '../../local/servers.js';
import { ACCT_HEADER, SIDE_CALL_HEADER, decodeAttribution } from '../../local/attribution.js';
import type { CallRecord, KeyUse } from '../ledger.js';
import {
  batchGetUnits,
  cancelledTransactionUnits,
  conditionCheckUnits,
  failedConditionUnits,
  indexWrites,
  itemReadUnits,
  itemSize,
  itemWriteUnits,
  keyText,
  queryPageUnits,
  type IndexSchema,
  type ReadMode,
  type TableSchema,
  type WireItem,
} from '../../functions/store/ddb/units.js';

export interface MeterStats {
  /** calls recorded */
  calls: number;
  /** reads the meter made itself (images, re-reads without projection) */
  sideCalls: number;
  /** calls forwarded unrecorded (administrative, or marked as side calls) */
  passed: number;
}

export interface MeterProxy {
  endpoint: string;
  port: number;
  /** every call recorded since the start or the last reset() */
  records: CallRecord[];
  stats: MeterStats;
  /** called with every record as it is made */
  onRecord?: (r: CallRecord) => void;
  /** forget the records (the shadow of item images stays) */
  reset(): void;
  stop(): Promise<void>;
}

const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);
const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);
/** a ClientRequestToken is honoured for 10 minutes after its request [TX] */
const TOKEN_WINDOW_MS = 10 * 60_000;
/** the shadow is dropped (and refilled from reads) beyond this many items */
const SHADOW_MAX = 500_000;

/** one item a write touches */
interface Touch {
  table: string;
  key: WireItem;
  kind: 'put' | 'update' | 'delete' | 'check';
  /** the Put's item */
  item?: WireItem;
}

function errorType(up: Upstream): string {
  try {
    const t = String((JSON.parse(up.body.toString()) as Json).__type ?? '');
    return t.slice(t.lastIndexOf('#') + 1);
  } catch {
    return '';
  }
}

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

export async function startMeterProxy(target: string, opts: { port?: number; host?: string } = {}): Promise<MeterProxy> {
  const { forward, close: closeUpstream } = upstreamClient(target);
  const stats: MeterStats = { calls: 0, sideCalls: 0, passed: 0 };
  const records: CallRecord[] = [];
  const writeLock = new Lock();
  /** table -> keyId -> image (null: known absent) */
  const shadow = new Map<string, WireItem | null>();
  const schemas = new Map<string, Promise<TableSchema>>();
  /** ClientRequestToken -> when its transaction succeeded */
  const tokens = new Map<string, number>();
  let seq = 0;

  /** a call of the meter's own, signed like the request that caused it */
  const call = async (req: IncomingMessage, op: string, input: Json): Promise<Json> => {
    stats.sideCalls++;
    const headers: Record<string, string | string[] | undefined> = { ...req.headers, 'x-amz-target': `DynamoDB_20120810.${op}` };
    delete headers[ACCT_HEADER];
    const r = await forward({ url: req.url, method: 'POST', headers }, Buffer.from(JSON.stringify(input)));
    if (r.status !== 200) throw new Error(`meter: ${op} failed upstream: ${r.status} ${r.body.toString().slice(0, 300)}`);
    return JSON.parse(r.body.toString()) as Json;
  };

  const schemaOf = (req: IncomingMessage, table: string): Promise<TableSchema> => {
    let s = schemas.get(table);
    if (!s) {
      s = call(req, 'DescribeTable', { TableName: table }).then((d) => {
        const t = (d.Table ?? {}) as {
          KeySchema?: Array<{ AttributeName: string; KeyType: string }>;
          GlobalSecondaryIndexes?: Array<{
            IndexName: string;
            KeySchema: Array<{ AttributeName: string; KeyType: string }>;
            Projection?: { ProjectionType?: string; NonKeyAttributes?: string[] };
          }>;
        };
        const keyOf = (ks: Array<{ AttributeName: string; KeyType: string }> | undefined, type: string) =>
          ks?.find((k) => k.KeyType === type)?.AttributeName;
        return {
          name: table,
          pk: keyOf(t.KeySchema, 'HASH') ?? 'pk',
          sk: keyOf(t.KeySchema, 'RANGE'),
          indexes: (t.GlobalSecondaryIndexes ?? []).map(
            (g): IndexSchema => ({
              name: g.IndexName,
              pk: keyOf(g.KeySchema, 'HASH')!,
              sk: keyOf(g.KeySchema, 'RANGE'),
              projection: (g.Projection?.ProjectionType as IndexSchema['projection']) ?? 'ALL',
              include: g.Projection?.NonKeyAttributes,
            }),
          ),
        };
      });
      s.catch(() => schemas.delete(table));
      schemas.set(table, s);
    }
    return s;
  };

  const tableKeyOf = (schema: TableSchema, item: WireItem): WireItem => ({
    [schema.pk]: item[schema.pk]!,
    ...(schema.sk ? { [schema.sk]: item[schema.sk]! } : {}),
  });
  const idOf = (schema: TableSchema, key: WireItem) =>
    `${schema.name}\u0000${keyText(key[schema.pk])}\u0000${schema.sk ? keyText(key[schema.sk]) : ''}`;

  /** consistent images of keys (one table), by id */
  const fetchImages = async (req: IncomingMessage, schema: TableSchema, keys: WireItem[]): Promise<Map<string, WireItem | null>> => {
    const out = new Map<string, WireItem | null>();
    const uniq = [...new Map(keys.map((k) => [idOf(schema, k), tableKeyOf(schema, k)])).values()];
    for (const k of uniq) out.set(idOf(schema, k), null);
    for (let i = 0; i < uniq.length; i += 100) {
      let pending: WireItem[] | undefined = uniq.slice(i, i + 100);
      while (pending?.length) {
        const r = (await call(req, 'BatchGetItem', { RequestItems: { [schema.name]: { Keys: pending, ConsistentRead: true } } })) as {
          Responses?: Record<string, WireItem[]>;
          UnprocessedKeys?: Record<string, { Keys: WireItem[] }>;
        };
        for (const it of r.Responses?.[schema.name] ?? []) out.set(idOf(schema, it), it);
        pending = r.UnprocessedKeys?.[schema.name]?.Keys;
      }
    }
    return out;
  };

  const remember = (id: string, image: WireItem | null) => {
    if (shadow.size >= SHADOW_MAX) shadow.clear();
    shadow.set(id, image);
  };

  const record = (r: Omit<CallRecord, 'seq'>) => {
    const full = { seq: ++seq, ...r };
    records.push(full);
    stats.calls++;
    meter.onRecord?.(full);
  };

  // ---------------------------------------------------------------- reads

  const meterRead = async (req: IncomingMessage, op: string, input: Json, out: Json, t: number): Promise<void> => {
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
        const schema = await schemaOf(req, g.table);
        let item = g.item ?? null;
        if (item && g.projected) item = (await fetchImages(req, schema, [g.key])).get(idOf(schema, g.key)) ?? item;
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
      record({ t, end, op, table: gets[0]?.table ?? '', mode, who, outcome: 'ok', read, write: 0, indexWrite: 0, keys });
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
        const schema = await schemaOf(req, table);
        const m: ReadMode = spec.ConsistentRead === true ? 'strong' : 'eventual';
        if (m === 'strong') mode = 'strong';
        const skipped = new Set((unprocessed[table]?.Keys ?? []).map((k) => idOf(schema, k)));
        const asked = ((spec.Keys ?? []) as WireItem[]).filter((k) => !skipped.has(idOf(schema, k)));
        const got = new Map<string, WireItem>();
        for (const it of ((out.Responses ?? {}) as Record<string, WireItem[]>)[table] ?? []) got.set(idOf(schema, it), it);
        if (spec.ProjectionExpression || spec.AttributesToGet) {
          // the projected items may lack their keys: size what is stored under every key asked
          got.clear();
          for (const [id, img] of await fetchImages(req, schema, asked)) if (img) got.set(id, img);
        }
        for (const k of asked) {
          const item = got.get(idOf(schema, k)) ?? null;
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
      record({ t, end, op, table: firstTable, mode, who, outcome: 'ok', read, write: 0, indexWrite: 0, keys });
      return;
    }
    // Query / Scan: one page
    const table = String(input.TableName);
    const schema = await schemaOf(req, table);
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
        items = ((await call(req, op, side)).Items ?? []) as WireItem[];
      } catch {
        // billed on what was returned (an underestimate) rather than failing the caller
      }
    }
    const bytes = items.reduce((n, it) => n + itemSize(it), 0);
    const units = queryPageUnits(bytes, mode);
    const pkName = index ? index.pk : schema.pk;
    const pk = op === 'Query' ? (queryPk(input, pkName) ?? (items[0] ? keyText(items[0][pkName]) : '?')) : '(scan)';
    record({
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
  };

  // ---------------------------------------------------------------- writes

  const touchesOf = (op: string, input: Json): Touch[] => {
    const out: Touch[] = [];
    if (op === 'PutItem') out.push({ table: String(input.TableName), key: input.Item as WireItem, kind: 'put', item: input.Item as WireItem });
    else if (op === 'UpdateItem') out.push({ table: String(input.TableName), key: input.Key as WireItem, kind: 'update' });
    else if (op === 'DeleteItem') out.push({ table: String(input.TableName), key: input.Key as WireItem, kind: 'delete' });
    else if (op === 'BatchWriteItem') {
      for (const [table, reqs] of Object.entries((input.RequestItems ?? {}) as Record<string, Json[]>)) {
        for (const r of reqs) {
          const put = (r.PutRequest as Json | undefined)?.Item as WireItem | undefined;
          const del = (r.DeleteRequest as Json | undefined)?.Key as WireItem | undefined;
          if (put) out.push({ table, key: put, kind: 'put', item: put });
          else if (del) out.push({ table, key: del, kind: 'delete' });
        }
      }
    } else if (op === 'TransactWriteItems') {
      for (const it of (input.TransactItems ?? []) as Json[]) {
        if (it.Put) {
          const p = it.Put as Json;
          out.push({ table: String(p.TableName), key: p.Item as WireItem, kind: 'put', item: p.Item as WireItem });
        } else if (it.Update) out.push({ table: String((it.Update as Json).TableName), key: (it.Update as Json).Key as WireItem, kind: 'update' });
        else if (it.Delete) out.push({ table: String((it.Delete as Json).TableName), key: (it.Delete as Json).Key as WireItem, kind: 'delete' });
        else if (it.ConditionCheck)
          out.push({ table: String((it.ConditionCheck as Json).TableName), key: (it.ConditionCheck as Json).Key as WireItem, kind: 'check' });
      }
    }
    return out;
  };

  const meterWrite = async (req: IncomingMessage, body: Buffer, op: string, input: Json): Promise<Upstream> => {
    const who = decodeAttribution(req.headers[ACCT_HEADER]);
    const touches = touchesOf(op, input);
    const schemaByTable = new Map<string, TableSchema>();
    for (const tc of touches) if (!schemaByTable.has(tc.table)) schemaByTable.set(tc.table, await schemaOf(req, tc.table));
    const id = (tc: Touch) => idOf(schemaByTable.get(tc.table)!, tc.key);
    // images before: the shadow's, else read now
    const unknown = new Map<string, Touch[]>();
    for (const tc of touches) if (!shadow.has(id(tc))) unknown.set(tc.table, [...(unknown.get(tc.table) ?? []), tc]);
    for (const [table, list] of unknown) {
      for (const [k, img] of await fetchImages(
        req,
        schemaByTable.get(table)!,
        list.map((tc) => tc.key),
      ))
        remember(k, img);
    }
    const before = new Map(touches.map((tc) => [id(tc), shadow.get(id(tc)) ?? null]));
    const t = Date.now();
    const up = await forward(req, body);
    const end = Date.now();
    const transactional = op === 'TransactWriteItems';
    const token = transactional ? (input.ClientRequestToken as string | undefined) : undefined;
    const tableKey = (tc: Touch) => {
      const s = schemaByTable.get(tc.table)!;
      return { pk: keyText(tc.key[s.pk]), ...(s.sk ? { sk: keyText(tc.key[s.sk]) } : {}) };
    };

    if (up.status === 200) {
      const now = Date.now();
      for (const [tok, at] of tokens) if (now - at > TOKEN_WINDOW_MS) tokens.delete(tok);
      if (token && tokens.has(token)) {
        // [TX]: a repeated call with the same token changes nothing and reads the items
        const keys: KeyUse[] = touches.map((tc) => {
          const bytes = itemSize(before.get(id(tc)));
          const units = itemReadUnits(bytes, 'transactional');
          return { space: 'table', ...tableKey(tc), read: units, write: 0, bytes, items: 1 };
        });
        record({
          t,
          end,
          op,
          table: touches[0]?.table ?? '',
          who,
          outcome: 'replay',
          read: keys.reduce((n, k) => n + k.read, 0),
          write: 0,
          indexWrite: 0,
          keys,
        });
        return up;
      }
      if (token) tokens.set(token, now);
      const out = JSON.parse(up.body.toString() || '{}') as Json;
      const skipped = new Set<string>();
      if (op === 'BatchWriteItem') {
        for (const [table, reqs] of Object.entries((out.UnprocessedItems ?? {}) as Record<string, Json[]>)) {
          const s = schemaByTable.get(table);
          if (!s) continue;
          for (const r of reqs) {
            const k = ((r.PutRequest as Json | undefined)?.Item ?? (r.DeleteRequest as Json | undefined)?.Key) as WireItem | undefined;
            if (k) skipped.add(idOf(s, k));
          }
        }
      }
      const written = touches.filter((tc) => !skipped.has(id(tc)));
      // images after: the Put's item, nothing for a Delete, read for an Update
      const after = new Map<string, WireItem | null>();
      const updates = new Map<string, Touch[]>();
      for (const tc of written) {
        if (tc.kind === 'put') after.set(id(tc), tc.item!);
        else if (tc.kind === 'delete') after.set(id(tc), null);
        else if (tc.kind === 'check') after.set(id(tc), before.get(id(tc)) ?? null);
        else updates.set(tc.table, [...(updates.get(tc.table) ?? []), tc]);
      }
      for (const [table, list] of updates) {
        for (const [k, img] of await fetchImages(
          req,
          schemaByTable.get(table)!,
          list.map((tc) => tc.key),
        ))
          after.set(k, img);
      }
      const keys: KeyUse[] = [];
      let write = 0;
      let indexWrite = 0;
      for (const tc of written) {
        const b = before.get(id(tc)) ?? null;
        const a = after.get(id(tc)) ?? null;
        const bb = itemSize(b);
        const ab = itemSize(a);
        const units = tc.kind === 'check' ? conditionCheckUnits(b ? bb : null) : itemWriteUnits(bb, ab, transactional);
        write += units;
        keys.push({ space: 'table', ...tableKey(tc), read: 0, write: units, bytes: Math.max(bb, ab), items: 1 });
        if (tc.kind === 'check') continue;
        for (const iw of indexWrites(schemaByTable.get(tc.table)!, b, a)) {
          indexWrite += iw.units;
          keys.push({
            space: iw.index,
            pk: iw.pk,
            ...(iw.sk !== undefined ? { sk: iw.sk } : {}),
            read: 0,
            write: iw.units,
            bytes: iw.bytes,
            items: 1,
          });
        }
        remember(id(tc), a);
      }
      record({ t, end, op, table: touches[0]?.table ?? '', who, outcome: 'ok', read: 0, write, indexWrite, keys });
      return up;
    }

    const type = errorType(up);
    if (type === 'ConditionalCheckFailedException' && touches.length === 1) {
      const tc = touches[0]!;
      const b = before.get(id(tc)) ?? null;
      const units = failedConditionUnits(b ? itemSize(b) : null, tc.kind === 'put' ? itemSize(tc.item) : undefined);
      record({
        t,
        end,
        op,
        table: tc.table,
        who,
        outcome: 'condition',
        read: 0,
        write: units,
        indexWrite: 0,
        keys: [{ space: 'table', ...tableKey(tc), read: 0, write: units, bytes: itemSize(b), items: 1 }],
      });
    } else if (type === 'TransactionCanceledException') {
      let reasons: Array<{ Code?: string }> = [];
      try {
        reasons = ((JSON.parse(up.body.toString()) as Json).CancellationReasons ?? []) as Array<{ Code?: string }>;
      } catch {
        reasons = [];
      }
      if (reasons.some((r) => r.Code === 'ConditionalCheckFailed')) {
        const sized = touches.map((tc) => {
          const bb = itemSize(before.get(id(tc)));
          return { tc, beforeBytes: bb, afterBytes: tc.kind === 'put' ? itemSize(tc.item) : tc.kind === 'delete' ? 0 : bb };
        });
        const keys: KeyUse[] = sized.map((s) => {
          const units = cancelledTransactionUnits([s]);
          return { space: 'table', ...tableKey(s.tc), read: 0, write: units, bytes: Math.max(s.beforeBytes, s.afterBytes), items: 1 };
        });
        record({
          t,
          end,
          op,
          table: touches[0]?.table ?? '',
          who,
          outcome: 'cancelled',
          read: 0,
          write: keys.reduce((n, k) => n + k.write, 0),
          indexWrite: 0,
          keys,
        });
      } else {
        record({ t, end, op, table: touches[0]?.table ?? '', who, outcome: 'error', read: 0, write: 0, indexWrite: 0, keys: [] });
      }
    } else {
      record({ t, end, op, table: touches[0]?.table ?? '', who, outcome: 'error', read: 0, write: 0, indexWrite: 0, keys: [] });
    }
    return up;
  };

  const send = (res: ServerResponse, up: Upstream) => reply(res, up.status, up.body, up.headers);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const { body, op, input } = await readRequest(req);
    if (req.headers[SIDE_CALL_HEADER] || (!READS.has(op) && !WRITES.has(op))) {
      stats.passed++;
      return send(res, await forward(req, body));
    }
    if (WRITES.has(op)) return send(res, await writeLock.run(() => meterWrite(req, body, op, input)));
    const t = Date.now();
    const up = await forward(req, body);
    if (up.status === 200) {
      try {
        await meterRead(req, op, input, JSON.parse(up.body.toString()) as Json, t);
      } catch (e) {
        process.stderr.write(`[berth] meter: could not bill a ${op}: ${(e as Error).message}\n`);
      }
    } else {
      record({
        t,
        end: Date.now(),
        op,
        table: String(input.TableName ?? ''),
        who: decodeAttribution(req.headers[ACCT_HEADER]),
        outcome: 'error',
        read: 0,
        write: 0,
        indexWrite: 0,
        keys: [],
      });
    }
    return send(res, up);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      if (!res.headersSent && !res.destroyed) {
        const msg = JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: `meter: ${(e as Error).message}` });
        res.writeHead(500, { 'content-type': 'application/x-amz-json-1.0', 'content-length': String(Buffer.byteLength(msg)) });
        res.end(msg);
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  const meter: MeterProxy = {
    endpoint: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    port,
    records,
    stats,
    reset() {
      records.length = 0;
    },
    stop: async () => {
      const closed = closeServers([server]);
      closeUpstream();
      await closed;
    },
  };
  return meter;
}
