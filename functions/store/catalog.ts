/**
 * Existence checks for resource class and trait names: standard names are known in
 * code, custom ones are items (pk RCS / TRAITS). Used by every handler that accepts
 * names in a query or body.
 */
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { isStandardResourceClass, isStandardTrait } from '../core/standard.js';
import { ddb, tableName } from './client.js';
import { K, keyFits } from './keys.js';

async function existingCustom(kind: 'trait' | 'rc', names: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  const uniq = [...new Set(names)];
  for (let i = 0; i < uniq.length; i += 100) {
    let keys: Record<string, unknown>[] | undefined = uniq
      .slice(i, i + 100)
      .map((n) => (kind === 'trait' ? K.customTrait(n) : K.customResourceClass(n)))
      .filter(keyFits);
    while (keys?.length) {
      const r = await ddb().send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: keys, ConsistentRead: true } } }));
      for (const it of r.Responses?.[tableName()] ?? []) found.add(String(it.sk));
      keys = r.UnprocessedKeys?.[tableName()]?.Keys as Record<string, unknown>[] | undefined;
    }
  }
  return found;
}

/** The names (in input order) that are neither standard nor existing custom traits. */
export async function missingTraits(names: Iterable<string>): Promise<string[]> {
  const list = [...names];
  const custom = list.filter((n) => !isStandardTrait(n));
  if (!custom.length) return [];
  const found = await existingCustom('trait', custom);
  return list.filter((n) => !isStandardTrait(n) && !found.has(n));
}

/** The names (in input order) that are neither standard nor existing custom resource classes. */
export async function missingResourceClasses(names: Iterable<string>): Promise<string[]> {
  const list = [...names];
  const custom = list.filter((n) => !isStandardResourceClass(n));
  if (!custom.length) return [];
  const found = await existingCustom('rc', custom);
  return list.filter((n) => !isStandardResourceClass(n) && !found.has(n));
}
