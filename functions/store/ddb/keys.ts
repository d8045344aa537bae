/**
 * Key helpers every item type uses: shard selection and DynamoDB's key limits. The
 * key builders themselves live with their items (store/placement/keys.ts,
 * store/baremetal/keys.ts); nothing else spells a key.
 */
import { createHash } from 'node:crypto';

/** a table-wide setting or progress record (`META` / <name>): the layout record, migrations, imports */
export const metaKey = (name: string) => ({ pk: 'META', sk: name });

/** stable small hash of a string, for shard selection */
export function shardOf(s: string, n: number): number {
  const h = createHash('md5').update(s).digest();
  return h.readUInt32BE(0) % n;
}

/**
 * DynamoDB refuses a request naming a key longer than 2048 bytes (partition) or 1024
 * bytes (sort), or an empty one, index keys included. No such item can exist, so reads of one find
 * nothing instead of failing (ids in URLs are not length-checked, as upstream).
 */
export function keyFits(k: { pk: string; sk?: string }): boolean {
  const pk = Buffer.byteLength(k.pk);
  const sk = k.sk === undefined ? 1 : Buffer.byteLength(k.sk);
  return pk >= 1 && pk <= 2048 && sk >= 1 && sk <= 1024;
}
