/**
 * What the meter knows of the table beside the calls it forwards, and the state its read
 * and write billing (./reads.ts, ./writes.ts) share: each table's key schema and indexes
 * (a DescribeTable the first time it is met), the shadow of item images (the image of
 * every key it has seen written, read consistently the first time a key is met), and its
 * own side calls, signed like the request that caused them and not billed.
 */
import type { IncomingMessage } from 'node:http';
import { ACCT_HEADER } from '../../local/attribution.js';
import type { Json, Upstream } from '../../local/ddb-upstream.js';
import type { IndexSchema, TableSchema, WireItem } from '../../functions/store/ddb/units.js';
import { keyText } from '../../functions/store/ddb/units.js';
import type { CallRecord } from '../ledger.js';

/** the shadow is dropped (and refilled from reads) beyond this many items */
const SHADOW_MAX = 500_000;

export interface MeterStats {
  /** calls recorded */
  calls: number;
  /** reads the meter made itself (images, re-reads without projection) */
  sideCalls: number;
  /** calls forwarded unrecorded (administrative, or marked as side calls) */
  passed: number;
}

export type Forward = (req: Pick<IncomingMessage, 'url' | 'method' | 'headers'>, body: Buffer) => Promise<Upstream>;

/** one meter's state, as its read and write billing use it */
export interface MeterContext {
  forward: Forward;
  images: Images;
  /** add a record to the ledger */
  record(r: Omit<CallRecord, 'seq'>): void;
  /** ClientRequestToken -> when its transaction succeeded */
  tokens: Map<string, number>;
}

export interface Images {
  /** a call of the meter's own, signed like the request that caused it */
  call(req: IncomingMessage, op: string, input: Json): Promise<Json>;
  schemaOf(req: IncomingMessage, table: string): Promise<TableSchema>;
  /** an item's (or key's) id in the shadow */
  idOf(schema: TableSchema, key: WireItem): string;
  /** consistent images of keys (one table), by id */
  fetchImages(req: IncomingMessage, schema: TableSchema, keys: WireItem[]): Promise<Map<string, WireItem | null>>;
  /** table -> keyId -> image (null: known absent) */
  shadow: Map<string, WireItem | null>;
  remember(id: string, image: WireItem | null): void;
}

export function meterImages(forward: Forward, stats: MeterStats): Images {
  /** table -> keyId -> image (null: known absent) */
  const shadow = new Map<string, WireItem | null>();
  const schemas = new Map<string, Promise<TableSchema>>();

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

  return { call, schemaOf, idOf, fetchImages, shadow, remember };
}
