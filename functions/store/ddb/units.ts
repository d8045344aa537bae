/**
 * DynamoDB's capacity arithmetic by AWS's documented rules: item sizes, read and write
 * units of every operation Berth uses, and the writes a global secondary index takes.
 * Pure (no I/O): the metering proxy (measure/meter/), the operators' bulk loader and
 * Placement import (cli/batch-write-units.ts: they report their units against AWS too,
 * which is why the rules live here, with the table, and not under measure/) and the
 * capacity bench use this one module; its unit tests (test/unit/capacity/units.test.ts)
 * check it against AWS's own worked examples.
 *
 * Sources (Amazon DynamoDB Developer Guide, read 2026-11-25; the archived text of the same
 * pages is in github.com/awsdocs/amazon-dynamodb-developer-guide, doc_source/, commit 8229480):
 *  [SIZES] "DynamoDB item sizes and formats"
 *          https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html
 *  [RW]    "DynamoDB read and write operations" (capacity unit consumption for reads / writes)
 *          https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html
 *          (archived as ProvisionedThroughput.md, "Capacity unit consumption for reads/writes")
 *  [TX]    "Amazon DynamoDB Transactions: How it works", Capacity management for transactions
 *          https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling
 *  [GSI]   "Using Global Secondary Indexes in DynamoDB", Provisioned throughput considerations
 *          https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations
 *
 * Where the pages are silent the rule chosen here is named as an ASSUMPTION below, so a
 * reader can weigh it (and the tests pin it).
 */

/** one attribute value on the wire ({ S: 'x' }, { N: '1' }, { M: {...} }, ...) */
export type AttributeValue = Record<string, unknown>;
/** an item in DynamoDB's wire format (attribute name -> attribute value) */
export type WireItem = Record<string, AttributeValue>;

/** [RW]: a read unit covers 4 KB, a write unit 1 KB (1 KB = 1024 bytes) */
export const READ_BLOCK = 4096;
export const WRITE_BLOCK = 1024;

export type ReadMode = 'strong' | 'eventual' | 'transactional';

/** [RW] strongly consistent = 1 unit per 4 KB, eventually consistent = half, transactional = 2 [TX] */
export const READ_FACTOR: Record<ReadMode, number> = { strong: 1, eventual: 0.5, transactional: 2 };

function utf8(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/**
 * [SIZES] "Numbers are variable length, with up to 38 significant digits. Leading and
 * trailing zeroes are trimmed. The size of a number is approximately (1 byte per two
 * significant digits) + (1 byte)". A zero counts as one digit.
 */
export function numberSize(text: string): number {
  let digits = text.trim().replace(/^[+-]/, '');
  const e = digits.search(/[eE]/);
  if (e >= 0) digits = digits.slice(0, e);
  digits = digits.replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}

/** raw bytes of a base64 value ([SIZES]: "the value's raw byte length is used") */
function binarySize(v: unknown): number {
  if (typeof v === 'string') return Buffer.from(v, 'base64').length;
  if (v instanceof Uint8Array) return v.length;
  return 0;
}

/**
 * The size of one attribute value, without its name ([SIZES]):
 *  S: UTF-8 bytes; N: see numberSize; B: raw bytes; BOOL / NULL: 1 byte;
 *  L / M: 3 bytes + for each element 1 byte + its size (a map element's size includes
 *  its key, as a top-level attribute's includes its name);
 *  SS / NS / BS: the sum of the elements' sizes. ASSUMPTION: the page names no
 *  overhead for sets, so none is added.
 */
export function valueSize(v: AttributeValue): number {
  if ('S' in v) return utf8(String(v.S));
  if ('N' in v) return numberSize(String(v.N));
  if ('B' in v) return binarySize(v.B);
  if ('BOOL' in v || 'NULL' in v) return 1;
  if ('L' in v) {
    const list = (v.L ?? []) as AttributeValue[];
    return 3 + list.reduce((n, x) => n + 1 + valueSize(x), 0);
  }
  if ('M' in v) {
    const map = (v.M ?? {}) as Record<string, AttributeValue>;
    let n = 3;
    for (const [k, x] of Object.entries(map)) n += 1 + utf8(k) + valueSize(x);
    return n;
  }
  if ('SS' in v) return ((v.SS ?? []) as string[]).reduce((n, s) => n + utf8(s), 0);
  if ('NS' in v) return ((v.NS ?? []) as string[]).reduce((n, s) => n + numberSize(s), 0);
  if ('BS' in v) return ((v.BS ?? []) as unknown[]).reduce((n: number, b) => n + binarySize(b), 0);
  return 0;
}

/** [SIZES] an item's size: the sum of its attribute names' UTF-8 bytes and values' sizes (0 for no item) */
export function itemSize(item: WireItem | null | undefined): number {
  if (!item) return 0;
  let n = 0;
  for (const [k, v] of Object.entries(item)) n += utf8(k) + valueSize(v);
  return n;
}

/** whole blocks for `bytes`, at least one ([RW]: a read of a missing item and a write of a new small item still take one) */
export function blocks(bytes: number, block: number): number {
  return Math.max(1, Math.ceil(bytes / block));
}

/**
 * Read units of one item-sized read (GetItem, one key of BatchGetItem, one TransactGetItems
 * item): its size rounded up to 4 KB, times the mode's factor. A missing item ([RW]: "If you
 * perform a read operation on an item that does not exist, DynamoDB still consumes provisioned
 * read throughput") costs one block.
 */
export function itemReadUnits(bytes: number, mode: ReadMode): number {
  return blocks(bytes, READ_BLOCK) * READ_FACTOR[mode];
}

/**
 * BatchGetItem [RW]: "DynamoDB processes each item in the batch as an individual GetItem
 * request, so DynamoDB first rounds up the size of each item to the next 4 KB boundary, and
 * then calculates the total size". `sizes` holds one entry per key read (null: missing).
 */
export function batchGetUnits(sizes: Array<number | null>, mode: ReadMode): number {
  return sizes.reduce((n: number, s) => n + itemReadUnits(s ?? 0, mode), 0);
}

/**
 * One Query or Scan page [RW]: "All items returned are treated as a single read operation,
 * where DynamoDB computes the total size of all items and then rounds up to the next 4 KB
 * boundary" (Scan: the items evaluated; a filter does not reduce it, nor does a projection).
 * For an index the sizes are those of the index entries [GSI].
 * ASSUMPTION: a page that reads nothing costs one block, as a read of a missing item does
 * (AWS bills at least one unit per request; the page does not state the empty case).
 */
export function queryPageUnits(evaluatedBytes: number, mode: Exclude<ReadMode, 'transactional'>): number {
  return blocks(evaluatedBytes, READ_BLOCK) * READ_FACTOR[mode];
}

/**
 * Write units of one item write [RW]: PutItem — "the item size that matters is the larger of
 * the two" (the item replaced and the new one); UpdateItem — "the larger of the 'before' and
 * 'after' item sizes"; DeleteItem — "the size of the deleted item"; BatchWriteItem — each put
 * or delete on its own. Rounded up to 1 KB, at least one unit. Transactional: two
 * underlying writes per item, one to prepare and one to commit [TX].
 */
export function itemWriteUnits(beforeBytes: number, afterBytes: number, transactional = false): number {
  return blocks(Math.max(beforeBytes, afterBytes), WRITE_BLOCK) * (transactional ? 2 : 1);
}

/**
 * A conditional PutItem / UpdateItem / DeleteItem whose condition failed [RW]: "DynamoDB still
 * consumes write capacity units from the table: for an existing item, the number of write
 * capacity units consumed depends on the size of the new item ...; for a new item, DynamoDB
 * consumes one write capacity unit". The new item's size is known for a Put (the request's
 * item); for an Update or a Delete the existing item's size is used.
 */
export function failedConditionUnits(existingBytes: number | null, putBytes?: number): number {
  if (existingBytes === null) return 1;
  return blocks(putBytes ?? existingBytes, WRITE_BLOCK);
}

/**
 * A TransactWriteItems ConditionCheck: [TX] "DynamoDB performs two underlying reads or writes
 * of every item in the transaction"; a ConditionCheck is an item of a write transaction and
 * is billed as a transactional write of the checked item's size (2 units per started KB; AWS
 * reports it as write capacity). A missing item: one block.
 */
export function conditionCheckUnits(checkedBytes: number | null): number {
  return blocks(checkedBytes ?? 0, WRITE_BLOCK) * 2;
}

/**
 * A TransactWriteItems cancelled by a failed condition. ASSUMPTION (the pages do not say):
 * the prepare phase ran for every item (one of the two underlying writes [TX]) and nothing
 * committed, so each item is billed once at the larger of its stored size and the written one.
 */
export function cancelledTransactionUnits(items: Array<{ beforeBytes: number; afterBytes: number }>): number {
  return items.reduce((n, it) => n + itemWriteUnits(it.beforeBytes, it.afterBytes, false), 0);
}

// ------------------------------------------------------------------ global secondary indexes

export interface IndexSchema {
  name: string;
  pk: string;
  sk?: string;
  /** ALL: every attribute; KEYS_ONLY: table and index keys; INCLUDE: those plus `include` */
  projection: 'ALL' | 'KEYS_ONLY' | 'INCLUDE';
  include?: string[];
}

export interface TableSchema {
  name: string;
  pk: string;
  sk?: string;
  indexes: IndexSchema[];
}

const isKeyType = (v: AttributeValue | undefined) => !!v && ('S' in v || 'N' in v || 'B' in v);

/**
 * The index entry an item has in `index`, or null when it has none: an item without the
 * index key attributes is not written to the index ([GSI], storage considerations: "DynamoDB
 * doesn't write any data for that item to the index" — a sparse index). The entry holds the
 * table's keys, the index keys and the projected attributes; its size is what reads and
 * writes of the index are billed on ([GSI] "based on the sizes of the index entries").
 */
export function indexEntry(table: TableSchema, index: IndexSchema, item: WireItem | null | undefined): WireItem | null {
  if (!item) return null;
  if (!isKeyType(item[index.pk]) || (index.sk !== undefined && !isKeyType(item[index.sk]))) return null;
  if (index.projection === 'ALL') return item;
  const keep = new Set([table.pk, ...(table.sk ? [table.sk] : []), index.pk, ...(index.sk ? [index.sk] : [])]);
  if (index.projection === 'INCLUDE') for (const a of index.include ?? []) keep.add(a);
  const out: WireItem = {};
  for (const [k, v] of Object.entries(item)) if (keep.has(k)) out[k] = v;
  return out;
}

/** a key attribute's value as text (S as is, N as written, B as its base64) */
export function keyText(v: AttributeValue | undefined): string {
  if (!v) return '';
  if ('S' in v) return String(v.S);
  if ('N' in v) return String(v.N);
  if ('B' in v) return typeof v.B === 'string' ? v.B : Buffer.from(v.B as Uint8Array).toString('base64');
  return JSON.stringify(v);
}

function sameValue(a: AttributeValue | undefined, b: AttributeValue | undefined): boolean {
  return canonical(a) === canonical(b);
}

/** a stable text for a value (map keys sorted, set elements sorted) to compare two images */
function canonical(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).sort();
    return `{${keys
      .map((k) => {
        const x = o[k];
        const sorted = (k === 'SS' || k === 'NS' || k === 'BS') && Array.isArray(x) ? [...(x as string[])].sort() : x;
        return `${JSON.stringify(k)}:${canonical(sorted)}`;
      })
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

function sameEntry(a: WireItem, b: WireItem): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if (!sameValue(a[k], b[k])) return false;
  return true;
}

export interface IndexWrite {
  index: string;
  /** put: an entry appears; delete: it goes; update: it stays under the same key, projected values changed */
  kind: 'put' | 'delete' | 'update';
  /** the index partition key value it lands on */
  pk: string;
  sk?: string;
  bytes: number;
  units: number;
}

/**
 * The index writes one table write causes, per [GSI] "Write capacity units":
 *  - an item that enters the index (new item, or an update that defines the indexed
 *    attributes): one put of the new entry;
 *  - an update that changes an index key value (A to B): a delete of the old entry and a
 *    put of the new one;
 *  - an item that leaves the index (indexed attribute removed, or item deleted): one delete;
 *  - an item in neither image: nothing;
 *  - the index keys unchanged but projected attributes changed: one write updating the
 *    entry (billed on the larger of the two entries, as an UpdateItem is);
 *  - nothing projected changed: "If a write to a table does not require a global secondary
 *    index update, no write capacity is consumed from the index".
 * Each write is billed on its entry's size rounded up to 1 KB ("Larger index entries require
 * additional write capacity units"). Index writes are not transactional: an index is
 * updated asynchronously after the table write commits (ASSUMPTION: a transaction's index
 * writes are billed once, not twice).
 */
export function indexWrites(table: TableSchema, before: WireItem | null | undefined, after: WireItem | null | undefined): IndexWrite[] {
  const out: IndexWrite[] = [];
  for (const index of table.indexes) {
    const a = indexEntry(table, index, before);
    const b = indexEntry(table, index, after);
    const at = (e: WireItem) => ({ pk: keyText(e[index.pk]), ...(index.sk ? { sk: keyText(e[index.sk]) } : {}) });
    if (!a && !b) continue;
    if (!a && b) {
      const bytes = itemSize(b);
      out.push({ index: index.name, kind: 'put', ...at(b), bytes, units: blocks(bytes, WRITE_BLOCK) });
    } else if (a && !b) {
      const bytes = itemSize(a);
      out.push({ index: index.name, kind: 'delete', ...at(a), bytes, units: blocks(bytes, WRITE_BLOCK) });
    } else if (a && b) {
      const keyChanged = !sameValue(a[index.pk], b[index.pk]) || (index.sk !== undefined && !sameValue(a[index.sk], b[index.sk]));
      if (keyChanged) {
        const ab = itemSize(a);
        const bb = itemSize(b);
        out.push({ index: index.name, kind: 'delete', ...at(a), bytes: ab, units: blocks(ab, WRITE_BLOCK) });
        out.push({ index: index.name, kind: 'put', ...at(b), bytes: bb, units: blocks(bb, WRITE_BLOCK) });
      } else if (!sameEntry(a, b)) {
        const bytes = Math.max(itemSize(a), itemSize(b));
        out.push({ index: index.name, kind: 'update', ...at(b), bytes, units: blocks(bytes, WRITE_BLOCK) });
      }
    }
  }
  return out;
}
