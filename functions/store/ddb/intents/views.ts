/**
 * What readers see of items a change larger than one transaction has locked
 * (protocol.ts, step 3): the read filter of reads.ts asks here for every locked item a
 * read of the document client answered with. A reader never writes: it reads the intent
 * and, of a committed one, its actions — as stored, through the plain client (items.ts).
 */
import type { TxItem } from '../commit.js';
import type { Item } from '../client.js';
import { keyId } from '../batch.js';
import { updatedItem } from '../update-expression.js';
import { type Intent, keyOf, readActions, readIntent, split } from './items.js';
import { isPlaceholder, LOCK, lockOf } from './lock.js';

/** the actions of committed intents, by intent (they never change): readers look them up */
const committedActions = new Map<string, Map<string, TxItem>>();

async function actionsByKey(intent: Intent): Promise<Map<string, TxItem>> {
  let m = committedActions.get(intent.id);
  if (!m) {
    m = new Map((await readActions(intent)).map((a) => [keyId(keyOf(a)), a]));
    if (committedActions.size >= 64) committedActions.delete(committedActions.keys().next().value!);
    committedActions.set(intent.id, m);
  }
  return m;
}

/** `it` as it was before the change that locked it (lock gone; a placeholder is no item) */
function before(it: Item): Item | undefined {
  if (isPlaceholder(it)) return undefined;
  const { [LOCK]: _, ...rest } = it;
  return rest;
}

/**
 * What readers see of locked items (undefined: no such item). A change not committed —
 * pending, aborted, or whose writer is gone (only a writer aborts it: a read changes
 * nothing) — is not seen at all: each item as it was. A committed one is seen whole:
 * each item as its action leaves it (update-expression.ts), whether or not it has been
 * written yet — its item cannot change in between, the lock keeps every other writer out.
 */
export async function lockedViews(items: Item[]): Promise<Map<Item, Item | undefined>> {
  const out = new Map<Item, Item | undefined>();
  const byIntent = new Map<string, Item[]>();
  for (const it of items) {
    const id = lockOf(it);
    if (!id) continue;
    if (!byIntent.has(id)) byIntent.set(id, []);
    byIntent.get(id)!.push(it);
  }
  for (const [id, locked] of byIntent) {
    const intent = await readIntent(id);
    const actions = intent?.status === 'committed' && !intent.closed ? await actionsByKey(intent) : undefined;
    for (const it of locked) {
      const action = actions?.get(keyId({ pk: String(it.pk), sk: String(it.sk) }));
      if (!action) {
        out.set(it, before(it));
        continue;
      }
      const [kind, a] = split(action);
      if (kind === 'Delete') out.set(it, undefined);
      else if (kind === 'ConditionCheck') out.set(it, before(it));
      else out.set(it, updatedItem(before(it), a));
    }
  }
  return out;
}
