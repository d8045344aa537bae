/**
 * Key builders for every item type in the table (docs/design.md has the full list).
 * Nothing else in the code base spells a key.
 */
import { createHash } from 'node:crypto';

export const PROVIDER_SHARDS = 16;
/** partitions of the sparse index of legacy allocation rows (the consumer migration reads them) */
export const LEGACY_SHARDS = 16;

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

export const K = {
  provider: (uuid: string) => ({ pk: `RP#${uuid}`, sk: 'RP' }),
  /** gsi1 keys that enumerate every provider (snapshot cold load) */
  providerIndex: (uuid: string) => ({ gsi1pk: `RPS#${shardOf(uuid, PROVIDER_SHARDS)}`, gsi1sk: uuid }),
  providerIndexPk: (shard: number) => `RPS#${shard}`,
  providerName: (name: string) => ({ pk: `RPNAME#${name}`, sk: 'RPNAME' }),
  /** one row per (provider, consumer): GET /resource_providers/{u}/allocations */
  providerAllocation: (rp: string, consumer: string) => ({ pk: `RP#${rp}`, sk: `ALLOC#${consumer}` }),
  providerAllocationPrefix: 'ALLOC#',
  /** gsi1 keys of an allocation row: all rows of one consumer */
  allocationByConsumer: (consumer: string, rp: string) => ({ gsi1pk: `CONSALLOC#${consumer}`, gsi1sk: rp }),
  allocationByConsumerPk: (consumer: string) => `CONSALLOC#${consumer}`,
  /** gsi2 keys of an allocation row that has no consumer record yet (imported legacy data; sparse) */
  legacyAllocationIndex: (consumer: string, rp: string) => ({
    gsi2pk: `LEGACYALLOC#${shardOf(consumer, LEGACY_SHARDS)}`,
    gsi2sk: `${consumer}#${rp}`,
  }),
  legacyAllocationIndexPk: (shard: number) => `LEGACYALLOC#${shard}`,
  consumer: (uuid: string) => ({ pk: `CONS#${uuid}`, sk: 'CONS' }),
  customResourceClass: (name: string) => ({ pk: 'RCS', sk: name }),
  customResourceClassPk: 'RCS',
  customTrait: (name: string) => ({ pk: 'TRAITS', sk: name }),
  customTraitPk: 'TRAITS',
  usagePk: (project: string) => `USAGE#${project}`,
  projectUsage: (project: string, shard: number) => ({ pk: `USAGE#${project}`, sk: `P#${shard}` }),
  userUsage: (project: string, user: string, shard: number) => ({ pk: `USAGE#${project}`, sk: `U#${user}#${shard}` }),
  changeLog: (bucket: number, shard: number) => `LOG#${bucket}#${shard}`,
  meta: (name: string) => ({ pk: 'META', sk: name }),
} as const;
