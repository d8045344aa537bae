/**
 * The lock of a change larger than one transaction (the intent protocol: protocol.ts):
 * while the change is under way every item it writes carries `lk = <intent id>`. Defined
 * here once for all who meet it: the protocol that sets and clears it, every other
 * write, which is refused on it (tx.ts), and every read, which sees through it
 * (views.ts, reads.ts).
 */
import type { Item } from '../client.js';

/** the attribute a change larger than one transaction locks its items with (its intent's id) */
export const LOCK = 'lk';

/** the intent whose lock `it` carries, as a value or as stored (an attribute value) */
export function lockOf(it: Item | undefined): string | undefined {
  const v = it?.[LOCK];
  return typeof v === 'string' ? v : typeof v?.S === 'string' ? v.S : undefined;
}

/** Is `it` a placeholder: an item that did not exist, locked (nothing but its keys and the lock)? */
export function isPlaceholder(it: Item): boolean {
  return Object.keys(it).every((a) => a === 'pk' || a === 'sk' || a === LOCK);
}
