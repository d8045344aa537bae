/**
 * The meter's writes, forwarded one at a time (the proxy holds a lock) and billed on the
 * images of every item they touch: the image before is the shadow's (./images.ts), the
 * image after the Put's item, nothing for a Delete, a consistent read after an Update.
 * Transactions cost double [TX], a ConditionCheck its read, a repeated transaction (the
 * same ClientRequestToken within 10 minutes) reads its items and writes nothing, a failed
 * conditional write or a transaction cancelled by a condition what AWS bills for it, and
 * every global secondary index entry added, changed or removed its own write.
 */
import type { IncomingMessage } from 'node:http';
import { ACCT_HEADER, decodeAttribution } from '../../local/attribution.js';
import type { Json, Upstream } from '../../local/ddb-upstream.js';
import {
  cancelledTransactionUnits,
  conditionCheckUnits,
  failedConditionUnits,
  indexWrites,
  itemReadUnits,
  itemSize,
  itemWriteUnits,
  keyText,
  type TableSchema,
  type WireItem,
} from '../../functions/store/ddb/units.js';
import type { KeyUse } from '../ledger.js';
import type { MeterContext } from './images.js';

/** a ClientRequestToken is honoured for 10 minutes after its request [TX] */
const TOKEN_WINDOW_MS = 10 * 60_000;

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

function touchesOf(op: string, input: Json): Touch[] {
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
}

/** Forward a write and bill it on the images of what it touched, before and after. */
export async function billWrite(ctx: MeterContext, req: IncomingMessage, body: Buffer, op: string, input: Json): Promise<Upstream> {
  const { images } = ctx;
  const who = decodeAttribution(req.headers[ACCT_HEADER]);
  const touches = touchesOf(op, input);
  const schemaByTable = new Map<string, TableSchema>();
  for (const tc of touches) if (!schemaByTable.has(tc.table)) schemaByTable.set(tc.table, await images.schemaOf(req, tc.table));
  const id = (tc: Touch) => images.idOf(schemaByTable.get(tc.table)!, tc.key);
  // images before: the shadow's, else read now
  const unknown = new Map<string, Touch[]>();
  for (const tc of touches) if (!images.shadow.has(id(tc))) unknown.set(tc.table, [...(unknown.get(tc.table) ?? []), tc]);
  for (const [table, list] of unknown) {
    for (const [k, img] of await images.fetchImages(
      req,
      schemaByTable.get(table)!,
      list.map((tc) => tc.key),
    ))
      images.remember(k, img);
  }
  const before = new Map(touches.map((tc) => [id(tc), images.shadow.get(id(tc)) ?? null]));
  const t = Date.now();
  const up = await ctx.forward(req, body);
  const end = Date.now();
  const transactional = op === 'TransactWriteItems';
  const token = transactional ? (input.ClientRequestToken as string | undefined) : undefined;
  const tableKey = (tc: Touch) => {
    const s = schemaByTable.get(tc.table)!;
    return { pk: keyText(tc.key[s.pk]), ...(s.sk ? { sk: keyText(tc.key[s.sk]) } : {}) };
  };

  if (up.status === 200) {
    const now = Date.now();
    for (const [tok, at] of ctx.tokens) if (now - at > TOKEN_WINDOW_MS) ctx.tokens.delete(tok);
    if (token && ctx.tokens.has(token)) {
      // [TX]: a repeated call with the same token changes nothing and reads the items
      const keys: KeyUse[] = touches.map((tc) => {
        const bytes = itemSize(before.get(id(tc)));
        const units = itemReadUnits(bytes, 'transactional');
        return { space: 'table', ...tableKey(tc), read: units, write: 0, bytes, items: 1 };
      });
      ctx.record({
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
    if (token) ctx.tokens.set(token, now);
    const out = JSON.parse(up.body.toString() || '{}') as Json;
    const skipped = new Set<string>();
    if (op === 'BatchWriteItem') {
      for (const [table, reqs] of Object.entries((out.UnprocessedItems ?? {}) as Record<string, Json[]>)) {
        const s = schemaByTable.get(table);
        if (!s) continue;
        for (const r of reqs) {
          const k = ((r.PutRequest as Json | undefined)?.Item ?? (r.DeleteRequest as Json | undefined)?.Key) as WireItem | undefined;
          if (k) skipped.add(images.idOf(s, k));
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
      for (const [k, img] of await images.fetchImages(
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
      images.remember(id(tc), a);
    }
    ctx.record({ t, end, op, table: touches[0]?.table ?? '', who, outcome: 'ok', read: 0, write, indexWrite, keys });
    return up;
  }

  const type = errorType(up);
  if (type === 'ConditionalCheckFailedException' && touches.length === 1) {
    const tc = touches[0]!;
    const b = before.get(id(tc)) ?? null;
    const units = failedConditionUnits(b ? itemSize(b) : null, tc.kind === 'put' ? itemSize(tc.item) : undefined);
    ctx.record({
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
      ctx.record({
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
      ctx.record({ t, end, op, table: touches[0]?.table ?? '', who, outcome: 'error', read: 0, write: 0, indexWrite: 0, keys: [] });
    }
  } else {
    ctx.record({ t, end, op, table: touches[0]?.table ?? '', who, outcome: 'error', read: 0, write: 0, indexWrite: 0, keys: [] });
  }
  return up;
}
