/**
 * Keys of the bare-metal items (docs/baremetal.md, "Bare metal"): nodes, allocations and
 * the small uniqueness items beside them. Only the bare-metal store modules use them.
 *
 * gsi2 (reserved for bare metal) enumerates nodes and allocations in a few sharded
 * partitions whose sort keys put the rows a lookup needs next to each other:
 *   node:       gsi2pk BMNS#<shard>  gsi2sk <resource class>#<1 if allocatable else 0>#<seq>
 *   allocation: gsi2pk BMAS#<shard>  gsi2sk <state>#<seq>
 * so "allocatable nodes of class X" and "allocations still allocating" are prefix
 * queries that read only matching rows.
 */
import { shardOf } from '../ddb/keys.js';
import { Err } from '../../core/baremetal/errors.js';

/**
 * Index partitions per item kind. Each lookup reads every shard, each write lands in
 * one: two shards double the write headroom of one index partition (1,000 WCU/s)
 * while a candidate search costs two small queries.
 */
export const BM_INDEX_SHARDS = 2;

/** seq as a fixed-width string so it sorts lexicographically */
export function seqKey(seq: number): string {
  return String(seq).padStart(17, '0');
}

/** a resource class inside a sort key: '#' and '%' escaped so prefixes stay exact */
export function rcKey(rc: string | null | undefined): string {
  return (rc ?? '').replace(/%/g, '%25').replace(/#/g, '%23');
}

export const BK = {
  node: (uuid: string) => ({ pk: `BMN#${uuid}`, sk: 'BMN' }),
  /** makes node names unique */
  nodeName: (name: string) => ({ pk: `BMNNAME#${name}`, sk: 'BMNNAME' }),
  /** makes instance_uuid unique across nodes (Ironic's unique column) */
  nodeInstance: (instanceUuid: string) => ({ pk: `BMNINST#${instanceUuid}`, sk: 'BMNINST' }),
  nodeIndexPk: (shard: number) => `BMNS#${shard}`,
  nodeIndex: (uuid: string, rc: string | null, allocatable: boolean, seq: number) => ({
    gsi2pk: `BMNS#${shardOf(uuid, BM_INDEX_SHARDS)}`,
    gsi2sk: `${rcKey(rc)}#${allocatable ? 1 : 0}#${seqKey(seq)}`,
  }),
  /** gsi2sk prefix of the allocatable nodes of one class */
  allocatablePrefix: (rc: string) => `${rcKey(rc)}#1#`,
  classPrefix: (rc: string) => `${rcKey(rc)}#`,
  allocation: (uuid: string) => ({ pk: `BMA#${uuid}`, sk: 'BMA' }),
  allocationName: (name: string) => ({ pk: `BMANAME#${name}`, sk: 'BMANAME' }),
  allocationIndexPk: (shard: number) => `BMAS#${shard}`,
  allocationIndex: (uuid: string, state: string, seq: number) => ({
    gsi2pk: `BMAS#${shardOf(uuid, BM_INDEX_SHARDS)}`,
    gsi2sk: `${state}#${seqKey(seq)}`,
  }),
  /** the marker (and fence) of one bare-metal transaction attempt (store/ddb/tx.ts) */
  txMarker: (token: string) => ({ pk: `BMTX#${token}`, sk: 'BMTX' }),
} as const;

/** transact() options of every bare-metal transaction: its marker is a bare-metal item */
export const BM_TX = { marker: BK.txMarker };

/** a node item's hold (allocations.ts holdNode): the execution holding it, and until when (ms); internal, never shown */
export const HOLD = 'hold';
export const HOLD_UNTIL = 'hold_until';

let seqCounter = 0;
/** creation order: µs-scaled timestamp plus a per-process counter */
export function nextBmSeq(): number {
  seqCounter = (seqCounter + 1) % 1000;
  return Date.now() * 1000 + seqCounter;
}

/**
 * DynamoDB refuses an item over 400 KB (a ValidationException: a 500 to the caller). A
 * node or allocation whose fields (extra, properties, instance_info, driver_info, …)
 * would not fit is bad input: refused with a 400 before anything is written. The bound
 * is on the item's JSON, which is never smaller than DynamoDB's measure of it.
 */
export const MAX_ITEM_BYTES = 350 * 1024;

export function refuseOversized(item: Record<string, unknown>, what: 'node' | 'allocation', uuid: string): void {
  const bytes = Buffer.byteLength(JSON.stringify(item), 'utf8');
  if (bytes > MAX_ITEM_BYTES) {
    throw Err.invalid(
      `The ${what} ${uuid} would take ${bytes} bytes to store, more than the ${MAX_ITEM_BYTES} ${what === 'node' ? 'a node' : 'an allocation'} may take (all its fields together: extra, properties, instance_info, driver_info and the rest).`,
    );
  }
}
