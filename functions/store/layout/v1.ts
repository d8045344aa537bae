/**
 * Layout 1's items as this release meets them while a table migrates to layout 2
 * (docs/items.md, "Layout versions and upgrades"), and the writes that convert them.
 * After the migration's gate no release writes layout 1, so a layout-1 item only ever
 * changes by being converted — here, by whoever meets it first:
 *
 *   provider      `RP` with its state inline (gen, inv, invVer, used, allocs) and no
 *                 `RPU`: readers read the inline state as it is; a writer has it
 *                 converted first (materializeProviders: one transaction puts the state
 *                 item, strips the definition and logs the provider), as does the
 *                 migration's scan
 *   usage         `USAGE#<project>` / `U#<user>#<shard>` (kind USAGE): moved into the
 *                 layout-2 item of its user and shard, which records it in `absorbed`, in
 *                 one transaction; GET /usages adds what is not moved yet (readUsage);
 *                 the per-project `P#<shard>` items (sums of the users') are deleted
 *   catalog       `RCS` / `TRAITS` partitions: moved before the table is served at all
 *   rows          allocation rows keep a gsi1 entry per consumer that layout 2 gives only
 *                 to legacy rows: removed (a cost, not a meaning)
 *   derived       layout 1 has no tree items and no aggregate sharing lists: the
 *                 migration's last pass writes them; until the table is complete, lists
 *                 narrowed to a tree and Nova's sharing query use the forest
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { keyId } from '../ddb/batch.js';
import { batchGet, ddb } from '../ddb/reads.js';
import type { Item } from '../ddb/client.js';
import { Expr } from '../ddb/expr.js';
import { keyFits } from '../ddb/keys.js';
import { queryPartition } from '../ddb/query.js';
import { RETRY, retryTransient, withRetries } from '../ddb/retry.js';
import { transact, type TxItem } from '../ddb/tx.js';
import { logPut, logStamp, type LogStamp } from '../placement/changelog.js';
import { K } from '../placement/keys.js';
import { fromItems, stateItem } from '../placement/provider-items.js';
import { config } from '../../config.js';
import { V1_CATALOG_PKS } from './state.js';

/** the attributes of a layout-1 provider item that layout 2 keeps in the state item */
export const V1_STATE_ATTRS = ['gen', 'inv', 'invVer', 'used', 'allocs'] as const;

/** Is `it` a layout-1 provider item (its state inline)? Layout 2's definition never carries `gen`. */
export function isV1Provider(it: Item | undefined): it is Item {
  return it !== undefined && it.sk === 'RP' && it.gen !== undefined;
}

/** actions per conversion transaction (DynamoDB's 100, with room for the log entry) */
const MAX_ACTIONS = 90;

/**
 * The actions that give layout-1 providers (`defs`, as read) their layout-2 items: the
 * state item (new), the definition without its state (still layout 1: nobody converted
 * it meanwhile), and one change-log entry naming them all (every forest reads them
 * again: same content, now with the state item's `last`). Tree and sharing-list items
 * are derived later, by the migration's last pass (migrate.ts).
 */
export function conversionActions(defs: Item[], stamp: LogStamp = logStamp()): TxItem[] {
  const items: TxItem[] = [];
  for (const def of defs) {
    const record = fromItems(def, def);
    const put = new Expr();
    items.push(put.when(put.absent('pk')).putItem(stateItem(record, stamp.sk)));
    const strip = new Expr();
    for (const a of V1_STATE_ATTRS) strip.remove(a);
    items.push(strip.when(strip.exists('gen')).updateItem(K.provider(record.uuid)));
  }
  items.push(logPut({ rereads: defs.map((d) => String(d.uuid)) }, stamp));
  return items;
}

/** the defs of `defs` grouped so that each group's conversion (two actions each, and the log entry) fits one transaction */
function groups(defs: Item[]): Item[][] {
  const per = Math.floor((MAX_ACTIONS - 1) / 2);
  const out: Item[][] = [];
  for (let i = 0; i < defs.length; i += per) out.push(defs.slice(i, i + per));
  return out;
}

/**
 * Convert the layout-1 providers among `defs` (items as read), in as few transactions as
 * fit. A group that loses a race (another converter, a large change's lock) is read again
 * and what is still layout 1 tried again; returns how many this call converted.
 */
export async function materializeProviders(defs: Item[]): Promise<number> {
  let converted = 0;
  for (const first of groups(defs.filter(isV1Provider))) {
    let group = first;
    converted += await withRetries(async () => {
      const out = await transact(conversionActions(group), {
        change: { op: 'internal', note: `layout migration: ${group.length} provider(s) given their state items` },
      });
      if (out.ok) return group.length;
      const fresh = await batchGet(group.map((d) => K.provider(String(d.uuid))));
      group = group.map((d) => fresh.get(keyId(K.provider(String(d.uuid))))).filter(isV1Provider);
      return group.length ? RETRY : 0;
    });
  }
  return converted;
}

// ------------------------------------------------------------------ usage

/** Is `it` a layout-1 usage item (project `P#<shard>`, user `U#<user>#<shard>`)? */
export function isV1Usage(it: Item): boolean {
  return it.kind === 'USAGE' && String(it.pk).startsWith('USAGE#');
}

/** the layout-1 partition of a project's usage */
export const v1UsagePk = (project: string) => `USAGE#${project}`;

/** the shard of a layout-1 user item (the number after its last '#') */
function v1Shard(it: Item): number {
  const sk = String(it.sk);
  return Number(sk.slice(sk.lastIndexOf('#') + 1)) || 0;
}

/**
 * The layout-1 user usage items of a project (or of one user) not yet absorbed into a
 * layout-2 item among `v2` (read AFTER these: an item moved in between is in `absorbed`
 * of the item read later, so it is counted once).
 */
export function unabsorbed(v1: Item[], v2: Iterable<Item>): Item[] {
  const absorbed = new Set<string>();
  for (const it of v2) for (const sk of (it.absorbed as Set<string> | undefined) ?? []) absorbed.add(sk);
  return v1.filter((it) => String(it.sk).startsWith('U#') && it.user !== undefined && !absorbed.has(String(it.sk)));
}

/** A project's layout-1 user items (consistent), or one user's. */
export async function readV1Usage(project: string, user?: string): Promise<Item[]> {
  if (!keyFits({ pk: v1UsagePk(project), sk: 'U#' })) return [];
  const items = await queryPartition({ pk: v1UsagePk(project), skBeginsWith: user === undefined ? 'U#' : `U#${user}#`, consistent: true });
  return items.filter((it) => isV1Usage(it) && (user === undefined || it.user === user));
}

/** The actions that move one layout-1 usage item: a user's into its layout-2 item, a project's away. */
export function usageMoveActions(it: Item): TxItem[] {
  const del = new Expr();
  const out: TxItem[] = [del.when(del.exists('pk')).deleteItem({ pk: String(it.pk), sk: String(it.sk) })];
  if (!String(it.sk).startsWith('U#') || it.user === undefined) return out;
  const project = String(it.project ?? String(it.pk).slice('USAGE#'.length));
  const shard = v1Shard(it) % config().usageShards;
  const e = new Expr()
    .set('project', project)
    .set('user', String(it.user))
    .add('absorbed', new Set([String(it.sk)]));
  for (const [k, v] of Object.entries(it)) if ((k.startsWith('n:') || k.startsWith('r:')) && typeof v === 'number' && v !== 0) e.add(k, v);
  out.push(e.updateItem(K.usage(project, shard, String(it.user))));
  return out;
}

/** Move one layout-1 usage item (idempotent: one already moved is gone); true if this call moved it. */
export async function moveUsage(it: Item): Promise<boolean> {
  return withRetries(async () => {
    const out = await transact(usageMoveActions(it), { change: { op: 'internal', note: 'layout migration: a usage item moved' } });
    if (out.ok) return true;
    return out.failed.includes(0) ? false : RETRY;
  });
}

// ------------------------------------------------------------------ catalog

/** The layout-1 custom classes and traits, as stored (consistent). */
export async function readV1Catalog(): Promise<Item[]> {
  return (await Promise.all(Object.values(V1_CATALOG_PKS).map((pk) => queryPartition({ pk, consistent: true })))).flat();
}

/** Move one layout-1 custom class or trait to its layout-2 partition (nobody else writes either while this runs). */
export async function moveCatalogItem(it: Item): Promise<void> {
  const name = String(it.sk);
  const key = it.pk === V1_CATALOG_PKS.rc ? K.customResourceClass(name) : K.customTrait(name);
  const { pk: _pk, sk: _sk, ...rest } = it;
  await withRetries(async () => {
    const del = new Expr();
    const out = await transact([new Expr().putItem({ ...rest, ...key }), del.when(del.exists('pk')).deleteItem({ pk: String(it.pk), sk: name })], {
      change: { op: 'internal', note: 'layout migration: a custom class or trait moved' },
    });
    // done — or done before (the layout-1 item is gone); a conflict: again
    return out.ok || out.failed.includes(1) ? true : RETRY;
  });
}

// ------------------------------------------------------------------ allocation rows

/** Is `it` an allocation row with layout 1's consumer index entry (not a legacy row, which keeps it)? */
export function isV1Row(it: Item): boolean {
  return String(it.sk).startsWith(K.providerAllocationPrefix) && it.gsi1pk !== undefined && !it.legacy;
}

/**
 * Drop a row's consumer index entry. An idempotent single-item update (repeating it is
 * harmless, so an unknown outcome is simply repeated, outside a transaction: half the units).
 */
export async function stripRow(it: Item): Promise<void> {
  const e = new Expr().remove('gsi1pk').remove('gsi1sk');
  e.when(e.exists('pk')).when(e.absent('legacy'));
  try {
    await retryTransient(() => ddb().send(new UpdateCommand(e.updateInput({ pk: String(it.pk), sk: String(it.sk) }))));
  } catch (err) {
    if ((err as Error).name !== 'ConditionalCheckFailedException') throw err;
  }
}
