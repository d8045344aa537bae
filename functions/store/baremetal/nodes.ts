/**
 * Bare-metal node items: their mapping, reads and the index queries. The writes, with the
 * conditions that keep names and instance UUIDs unique, are node-writes.ts.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { keyId } from '../ddb/batch.js';
import { batchGet, ddb } from '../ddb/reads.js';
import { queryPartition } from '../ddb/query.js';
import { isAllocatable, type NodeRecord } from '../../core/baremetal/records.js';
import { tableName } from '../ddb/client.js';
import { BK, BM_INDEX_SHARDS, HOLD, HOLD_UNTIL } from './keys.js';

const INTERNAL = new Set(['pk', 'sk', 'gsi2pk', 'gsi2sk', 'type', HOLD, HOLD_UNTIL]);

export function nodeIndexKeys(n: NodeRecord) {
  return BK.nodeIndex(n.uuid, n.resource_class, isAllocatable(n), n.seq);
}

export function nodeToItem(n: NodeRecord): Record<string, unknown> {
  const item: Record<string, unknown> = { ...BK.node(n.uuid), ...nodeIndexKeys(n), type: 'BMN' };
  for (const [k, v] of Object.entries(n)) if (v !== null && v !== undefined) item[k] = v;
  // what the lock holder does is only meaningful while it holds the lock
  if (!n.lock) delete item.lock_action;
  return item;
}

const DEFAULTS: Omit<NodeRecord, 'uuid' | 'driver' | 'created_at' | 'seq'> = {
  name: null,
  driver_info: {},
  driver_internal_info: {},
  properties: {},
  extra: {},
  instance_info: {},
  instance_uuid: null,
  allocation_uuid: null,
  resource_class: null,
  provision_state: 'enroll',
  target_provision_state: null,
  provision_updated_at: null,
  power_state: null,
  target_power_state: null,
  maintenance: false,
  maintenance_reason: null,
  fault: null,
  last_error: null,
  owner: null,
  lessee: null,
  description: null,
  conductor_group: '',
  protected: false,
  protected_reason: null,
  retired: false,
  retired_reason: null,
  automated_clean: null,
  console_enabled: false,
  network_data: {},
  boot_mode: null,
  secure_boot: null,
  clean_step: {},
  deploy_step: {},
  raid_config: {},
  target_raid_config: {},
  inspection_started_at: null,
  inspection_finished_at: null,
  traits: [],
  vifs: [],
  bios_interface: null,
  boot_interface: null,
  console_interface: null,
  deploy_interface: null,
  inspect_interface: null,
  management_interface: null,
  network_interface: null,
  power_interface: null,
  raid_interface: null,
  rescue_interface: null,
  storage_interface: null,
  vendor_interface: null,
  updated_at: null,
  lock: null,
  lock_action: null,
  ver: 0,
};

/** A record with every field present (defaults for the unset ones). */
export function completeNode(partial: Partial<NodeRecord> & Pick<NodeRecord, 'uuid' | 'driver' | 'created_at' | 'seq'>): NodeRecord {
  return { ...structuredClone(DEFAULTS), ...partial } as NodeRecord;
}

export function nodeFromItem(it: Record<string, unknown>): NodeRecord {
  const rec: Record<string, unknown> = structuredClone(DEFAULTS);
  for (const [k, v] of Object.entries(it)) if (!INTERNAL.has(k)) rec[k] = v;
  rec.ver = Number(rec.ver ?? 0);
  rec.seq = Number(rec.seq ?? 0);
  return rec as unknown as NodeRecord;
}

export async function getNode(uuid: string): Promise<NodeRecord | undefined> {
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: BK.node(uuid), ConsistentRead: true }));
  return r.Item ? nodeFromItem(r.Item) : undefined;
}

export async function getNodeUuidByName(name: string): Promise<string | undefined> {
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: BK.nodeName(name), ConsistentRead: true }));
  return r.Item ? String(r.Item.uuid) : undefined;
}

/**
 * getNodeUuidByName for the allocation process (the node named like an allocation, tried
 * first), with concurrent callers in one process sharing calls as allocatableNodes does:
 * names asked for while a call is in flight go together in the next one (a BatchGetItem),
 * so every answer comes from a strongly consistent read that started after it was asked.
 * A burst of N allocations costs a few calls instead of N; a lone caller costs one.
 */
export function nodeUuidByNameShared(name: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const waiting = nameWaiters.get(name) ?? [];
    waiting.push({ resolve, reject });
    nameWaiters.set(name, waiting);
    lookUpNames();
  });
}
type NameWaiter = { resolve: (uuid: string | undefined) => void; reject: (e: unknown) => void };
let nameWaiters = new Map<string, NameWaiter[]>();
let namesInFlight = false;

function lookUpNames(): void {
  if (namesInFlight || !nameWaiters.size) return;
  namesInFlight = true;
  const batch = nameWaiters;
  nameWaiters = new Map();
  batchGet([...batch.keys()].map((n) => BK.nodeName(n)))
    .then((found) => {
      for (const [name, waiters] of batch) {
        const it = found.get(keyId(BK.nodeName(name)));
        for (const w of waiters) w.resolve(it ? String(it.uuid) : undefined);
      }
    })
    .catch((e) => {
      for (const waiters of batch.values()) for (const w of waiters) w.reject(e);
    })
    .finally(() => {
      namesInFlight = false;
      lookUpNames();
    });
}

export async function getNodeByName(name: string): Promise<NodeRecord | undefined> {
  const uuid = await getNodeUuidByName(name);
  return uuid ? getNode(uuid) : undefined;
}

/** The node holding an instance UUID, if any. */
export async function nodeUuidForInstance(instanceUuid: string): Promise<string | undefined> {
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: BK.nodeInstance(instanceUuid), ConsistentRead: true }));
  return r.Item ? String(r.Item.node) : undefined;
}

/** the attributes allocation processing reads (a node item is ~2 KB; these are ~300 B) */
const CANDIDATE_FIELDS = [
  'uuid',
  'name',
  'resource_class',
  'provision_state',
  'maintenance',
  'power_state',
  'instance_uuid',
  'owner',
  'lessee',
  'traits',
  'seq',
  'ver',
];
// every name through a placeholder: several (uuid, name, owner) are DynamoDB reserved words
const CANDIDATE_ATTRIBUTES = CANDIDATE_FIELDS.map((_, i) => `#c${i}`);
const CANDIDATE_NAMES = Object.fromEntries(CANDIDATE_FIELDS.map((f, i) => [`#c${i}`, f]));

/**
 * Strongly consistent batch read; missing nodes are absent from the map. With
 * `candidateFieldsOnly` only what allocation processing needs is returned (the other
 * fields of the records are defaults).
 */
export async function getNodes(uuids: Iterable<string>, candidateFieldsOnly = false): Promise<Map<string, NodeRecord>> {
  const out = new Map<string, NodeRecord>();
  const items = await batchGet(
    [...new Set(uuids)].map((u) => BK.node(u)),
    candidateFieldsOnly ? { projection: { expression: CANDIDATE_ATTRIBUTES.join(', '), names: CANDIDATE_NAMES } } : {},
  );
  for (const it of items.values()) out.set(String(it.uuid), nodeFromItem(it));
  return out;
}

/** Map names and UUIDs to node UUIDs (missing ones are absent). */
export async function nodeUuidsByNames(names: Iterable<string>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const it of (await batchGet([...new Set(names)].map((n) => BK.nodeName(n)))).values()) {
    out.set(String(it.pk).slice('BMNNAME#'.length), String(it.uuid));
  }
  return out;
}

async function queryShard(shard: number, prefix: string | undefined, candidateFieldsOnly: boolean): Promise<NodeRecord[]> {
  const items = await queryPartition({
    index: 'gsi2',
    pk: BK.nodeIndexPk(shard),
    skBeginsWith: prefix,
    projection: candidateFieldsOnly ? { expression: CANDIDATE_ATTRIBUTES.join(', '), names: CANDIDATE_NAMES } : undefined,
  });
  return items.map(nodeFromItem);
}

/**
 * Nodes through the gsi2 index, in creation order: all of them, those of one
 * resource class, or only the allocatable ones of a class (available, not in
 * maintenance, power state known, no instance). Index reads are eventually
 * consistent: writers re-check everything they rely on in their own conditions.
 * The allocatable-only query returns just the fields allocation processing needs.
 */
export async function queryNodes(opts: { resourceClass?: string; allocatableOnly?: boolean } = {}): Promise<NodeRecord[]> {
  const prefix =
    opts.resourceClass === undefined
      ? undefined
      : opts.allocatableOnly
        ? BK.allocatablePrefix(opts.resourceClass)
        : BK.classPrefix(opts.resourceClass);
  const parts = await Promise.all(Array.from({ length: BM_INDEX_SHARDS }, (_, s) => queryShard(s, prefix, !!opts.allocatableOnly)));
  return parts.flat().sort((a, b) => a.seq - b.seq);
}

/**
 * The allocatable nodes of a class, with concurrent callers in one process sharing
 * queries: a caller joins a query that started after it arrived (so it still sees
 * every write committed before it asked), otherwise waits for the one in flight and
 * then starts or joins the next. A burst of N allocations costs about two index
 * reads instead of N, and no caller reads older data than a query of its own would.
 */
export async function allocatableNodes(rc: string): Promise<NodeRecord[]> {
  const arrived = ++ticket;
  for (;;) {
    const cur = inflight.get(rc);
    if (cur && cur.ticket > arrived) return cur.promise;
    if (cur) {
      await cur.promise.catch(() => undefined);
      continue;
    }
    const entry = { ticket: ++ticket, promise: queryNodes({ resourceClass: rc, allocatableOnly: true }) };
    inflight.set(rc, entry);
    entry.promise
      .finally(() => {
        if (inflight.get(rc) === entry) inflight.delete(rc);
      })
      .catch(() => undefined);
    return entry.promise;
  }
}
let ticket = 0;
const inflight = new Map<string, { ticket: number; promise: Promise<NodeRecord[]> }>();
