/**
 * The import's own item, `META` / `import-placement` (transfer.ts): which source the
 * table's Placement items came from, how many passes ran and when the last one ended. A
 * pass begins and ends with a conditional write of it, so two passes never run at once.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { tableName, type Item } from '../ddb/client.js';
import { ddb } from '../ddb/reads.js';
import { Expr } from '../ddb/expr.js';
import { K } from './keys.js';

export const IMPORT_META = 'import-placement';

/** What the import's own item says (`META` / `import-placement`). */
export interface ImportRecord {
  /** the source's Placement endpoint */
  source: string;
  /** the microversion the source was read at */
  version: string;
  /** passes begun (the current one included) */
  passes: number;
  /** 'writing' while a pass writes (and after one that was cut short), else 'done' */
  phase: 'writing' | 'done';
  /** the pass that holds the item (a random id) */
  owner: string;
  startedAt: string;
  passStartedAt: string;
  /** when the pass last said it was writing (every few seconds) */
  lastWriteAt: string;
  /** when the last pass that finished ended */
  lastPassEnd?: string;
  /** whether that pass was a final one (the source frozen, every allocation read again) */
  final: boolean;
  /** the last passes, newest last (counts of what each read and wrote) */
  history: Array<Record<string, unknown>>;
}

/** the import's own item, or undefined */
export async function readImportRecord(): Promise<ImportRecord | undefined> {
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: K.meta(IMPORT_META), ConsistentRead: true }));
  return r.Item ? recordFromItem(r.Item) : undefined;
}

function recordFromItem(it: Item): ImportRecord {
  return {
    source: String(it.source),
    version: String(it.version),
    passes: Number(it.passes ?? 0),
    phase: it.phase === 'writing' ? 'writing' : 'done',
    owner: String(it.owner ?? ''),
    startedAt: String(it.startedAt),
    passStartedAt: String(it.passStartedAt ?? it.startedAt),
    lastWriteAt: String(it.lastWriteAt ?? it.passStartedAt ?? it.startedAt),
    lastPassEnd: it.lastPassEnd ? String(it.lastPassEnd) : undefined,
    final: it.final === true,
    history: Array.isArray(it.history) ? it.history : [],
  };
}

/** A pass may not start (someone else's rows, another source, a pass running). */
export class ImportRefused extends Error {}

const HISTORY_KEPT = 20;

/**
 * Take the import's item for a new pass: created for the first pass, else only if no
 * other pass took it since `prev` was read (passes unchanged).
 */
export async function beginPass(prev: ImportRecord | undefined, source: string, version: string, now: string): Promise<ImportRecord> {
  const rec: ImportRecord = {
    source,
    version,
    passes: (prev?.passes ?? 0) + 1,
    phase: 'writing',
    owner: randomUUID(),
    startedAt: prev?.startedAt ?? now,
    passStartedAt: now,
    lastWriteAt: now,
    lastPassEnd: prev?.lastPassEnd,
    final: prev?.final ?? false,
    history: prev?.history ?? [],
  };
  const e = new Expr()
    .set('source', source)
    .set('version', version)
    .set('passes', rec.passes)
    .set('phase', 'writing')
    .set('owner', rec.owner)
    .set('startedAt', rec.startedAt)
    .set('passStartedAt', now)
    .set('lastWriteAt', now);
  e.when(prev ? e.eq('passes', prev.passes) : e.absent('pk'));
  await conditional(e, 'another import pass began on this table meanwhile');
  return rec;
}

/** The pass is still writing (what the next pass's check of who wrote what goes by). */
export async function heartbeat(rec: ImportRecord, at: string): Promise<void> {
  const e = new Expr().set('lastWriteAt', at);
  e.when(e.eq('owner', rec.owner));
  await conditional(e, 'another import pass took this table over');
  rec.lastWriteAt = at;
}

/** The pass ended: its counts go into the history. */
export async function endPass(rec: ImportRecord, final: boolean, summary: Record<string, unknown>, at: string): Promise<void> {
  const history = [...rec.history, { pass: rec.passes, final, startedAt: rec.passStartedAt, endedAt: at, ...summary }].slice(-HISTORY_KEPT);
  const e = new Expr().set('phase', 'done').set('lastPassEnd', at).set('lastWriteAt', at).set('final', final).set('history', history);
  e.when(e.eq('owner', rec.owner));
  await conditional(e, 'another import pass took this table over');
  Object.assign(rec, { phase: 'done', lastPassEnd: at, lastWriteAt: at, final, history });
}

async function conditional(e: Expr, refused: string): Promise<void> {
  try {
    await ddb().send(new UpdateCommand(e.updateInput(K.meta(IMPORT_META))));
  } catch (err) {
    if ((err as Error).name === 'ConditionalCheckFailedException') throw new ImportRefused(refused);
    throw err;
  }
}
