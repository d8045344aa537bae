/**
 * Existence checks for resource class and trait names: standard names are known in
 * code, custom ones are items (pk RCS / TRAITS). Used by every handler that accepts
 * names in a query or body.
 */
import { isStandardResourceClass, isStandardTrait } from '../../core/placement/standard.js';
import { batchGet } from '../ddb/batch.js';
import { K } from './keys.js';

async function existingCustom(kind: 'trait' | 'rc', names: string[]): Promise<Set<string>> {
  const keys = [...new Set(names)].map((n) => (kind === 'trait' ? K.customTrait(n) : K.customResourceClass(n)));
  return new Set([...(await batchGet(keys)).values()].map((it) => String(it.sk)));
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
