/**
 * Key builders for every item type in the table (docs/items.md has the full list).
 * Nothing else in the code base spells a key.
 */
import { metaKey, shardOf } from '../ddb/keys.js';

export const PROVIDER_SHARDS = 16;
/** partitions of the sparse index of legacy allocation rows (the consumer migration reads them) */
export const LEGACY_SHARDS = 16;
/** partitions custom resource classes and custom traits spread over (by name): each name's reads and refs counts do not share one */
export const CATALOG_SHARDS = 8;
const catalogPks = (prefix: string) => Array.from({ length: CATALOG_SHARDS }, (_, s) => `${prefix}#${s}`);

export const K = {
  /** a provider's name, tree links, traits, aggregates (what rarely changes; in gsi1) */
  provider: (uuid: string) => ({ pk: `RP#${uuid}`, sk: 'RP' }),
  /** a provider's state: generation, inventory, usage (what claims change; in no index) */
  providerState: (uuid: string) => ({ pk: `RP#${uuid}`, sk: 'RPU' }),
  /** a root's tree: `members`, the string set of its descendants (absent while it has none) */
  providerTree: (root: string) => ({ pk: `RP#${root}`, sk: 'TREE' }),
  /** sort keys of a provider's two items (a Query of its partition between them reads both; up to `tree`, a root's tree too) */
  providerSks: { from: 'RP', to: 'RPU', tree: 'TREE' },
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
  customResourceClass: (name: string) => ({ pk: `RCS#${shardOf(name, CATALOG_SHARDS)}`, sk: name }),
  /** every partition of custom classes (a list reads them all) */
  customResourceClassPks: catalogPks('RCS'),
  customTrait: (name: string) => ({ pk: `TRAITS#${shardOf(name, CATALOG_SHARDS)}`, sk: name }),
  customTraitPks: catalogPks('TRAITS'),
  /** an aggregate's first sighting (its creation sequence: upstream lists aggregates by internal id) */
  aggregate: (uuid: string) => ({ pk: `AGG#${uuid}`, sk: 'AGG' }),
  /**
   * a provider sharing its resources through an aggregate (it has the aggregate and
   * MISC_SHARES_VIA_AGGREGATE): the aggregate's partition lists its sharing providers
   */
  sharing: (aggregate: string, provider: string) => ({ pk: `AGG#${aggregate}`, sk: `S#${provider}` }),
  sharingPrefix: 'S#',
  /**
   * one user's usage in one shard of a project (a project's usage is the sum of its users'):
   * the shard is in the partition key, so one busy project spreads over USAGE_SHARDS partitions
   */
  usage: (project: string, shard: number, user: string) => ({ pk: `USAGE#${project}#${shard}`, sk: `U#${user}` }),
  usagePk: (project: string, shard: number) => `USAGE#${project}#${shard}`,
  changeLog: (shard: number) => `LOG#${shard}`,
  meta: metaKey,
  /** the current forest image's manifest (its own partition: readers of it need no other META item) */
  imageManifest: { pk: 'FOREST', sk: 'image' },
  /**
   * one chunk of a forest image (store/placement/image.ts), each in its own partition: a
   * burst of cold containers reads every chunk of one image at once
   */
  imageChunk: (id: string, chunk: number) => ({ pk: `IMG#${id}#${String(chunk).padStart(5, '0')}`, sk: 'IMG' }),
} as const;
