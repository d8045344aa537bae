/**
 * The write units of every BatchWriteItem an AWS SDK DynamoDB client sends (a hook on its
 * middleware stack), computed from the items it writes by AWS's rules
 * (functions/store/ddb/units.ts, the metering proxy's too), so the bulk loader (./load.ts)
 * and the Placement import (./import-placement.ts) report their units with no proxy,
 * against AWS too.
 */
import { GSIS, TABLE_KEYS } from '../functions/store/ddb/table.js';
import { indexWrites, itemSize, itemWriteUnits, type TableSchema, type WireItem } from '../functions/store/ddb/units.js';

/** Berth's table as the unit rules see it (functions/store/ddb/table.ts: both indexes project ALL) */
export function berthSchema(name: string): TableSchema {
  return { name, pk: TABLE_KEYS.pk, sk: TABLE_KEYS.sk, indexes: GSIS.map((g) => ({ name: g.name, pk: g.pk, sk: g.sk, projection: 'ALL' as const })) };
}

/** the part of a client's middleware stack the hook uses */
export interface Stack {
  add(
    mw: (next: (args: { request: unknown }) => Promise<unknown>) => (args: { request: unknown }) => Promise<unknown>,
    opts: { step: 'build'; name: string },
  ): void;
}

interface WireRequest {
  headers?: Record<string, string>;
  body?: unknown;
}

/** an SDK client's middleware stack, as the hook uses it */
export function sdkStack(client: { middlewareStack: unknown }): Stack {
  return client.middlewareStack as Stack;
}

/** a serialized request body as text (the SDK's JSON serializer hands over bytes) */
function bodyText(b: unknown): string | undefined {
  if (typeof b === 'string') return b;
  if (b instanceof Uint8Array) return new TextDecoder().decode(b);
  return undefined;
}

export interface BatchWriteUnits {
  calls: number;
  items: number;
  bytes: number;
  /** table write units */
  write: number;
  /** index write units */
  indexWrite: number;
}

/**
 * Count the units of every BatchWriteItem put: each item is taken as new (nothing replaced),
 * which is what a bulk load into an empty deployment writes; a put that replaced a larger
 * item would cost more. Deletes are counted at one unit (their size is not known here).
 */
export function meterBatchWrites(stack: Stack, schemaOf: (table: string) => TableSchema | undefined): BatchWriteUnits {
  const u: BatchWriteUnits = { calls: 0, items: 0, bytes: 0, write: 0, indexWrite: 0 };
  stack.add(
    (next) => async (args) => {
      const req = args.request as WireRequest;
      const target = req?.headers?.['x-amz-target'] ?? '';
      const body = bodyText(req.body);
      if (target.endsWith('.BatchWriteItem') && body !== undefined) {
        const out = (await next(args)) as { output?: { UnprocessedItems?: Record<string, unknown[]> } };
        const input = JSON.parse(body) as { RequestItems?: Record<string, Array<{ PutRequest?: { Item: WireItem }; DeleteRequest?: unknown }>> };
        u.calls++;
        for (const [table, reqs] of Object.entries(input.RequestItems ?? {})) {
          const schema = schemaOf(table);
          // unprocessed items are not written now: they are sent again (and counted then)
          const unprocessed = new Set((out.output?.UnprocessedItems?.[table] ?? []).map((x) => JSON.stringify(x)));
          for (const r of reqs) {
            if (unprocessed.has(JSON.stringify(r))) continue;
            u.items++;
            if (r.PutRequest) {
              const item = r.PutRequest.Item;
              const size = itemSize(item);
              u.bytes += size;
              u.write += itemWriteUnits(0, size);
              if (schema) for (const iw of indexWrites(schema, null, item)) u.indexWrite += iw.units;
            } else u.write += 1;
          }
        }
        return out;
      }
      return next(args);
    },
    { step: 'build', name: 'berthBatchWriteUnits' },
  );
  return u;
}
