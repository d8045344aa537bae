/**
 * Reference counts on custom resource classes and custom traits. A custom class
 * counts the providers holding inventory of it, a custom trait the providers that
 * have it; both change in the same transaction as the provider, so "delete a class
 * or trait that is in use" is refused by a condition (refs = 0), never by a racy read.
 * Standard classes and traits cannot be deleted and are not counted.
 */
import { isStandardResourceClass, isStandardTrait } from '../../core/placement/standard.js';
import { Expr } from '../ddb/expr.js';
import { K } from './keys.js';
import type { TxItem } from '../ddb/tx.js';
import type { RefChange } from '../../core/placement/provider-patch.js';

/** Transaction actions for the counted (custom) names; increments require the item to exist. */
export function refUpdates(changes: RefChange[]): { items: TxItem[]; names: RefChange[] } {
  const items: TxItem[] = [];
  const names: RefChange[] = [];
  for (const c of changes) {
    if (c.delta === 0) continue;
    if (c.kind === 'trait' ? isStandardTrait(c.name) : isStandardResourceClass(c.name)) continue;
    const key = c.kind === 'trait' ? K.customTrait(c.name) : K.customResourceClass(c.name);
    const e = new Expr().add('refs', c.delta);
    items.push(e.when(e.exists('pk')).updateItem(key));
    names.push(c);
  }
  return { items, names };
}
