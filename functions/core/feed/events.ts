/**
 * One committed change → exactly one event (docs/consistency.md, "The change feed"; the shapes
 * are schemas/events/v1/*.json, checked against every event the tests see).
 *
 * EventBridge's envelope: `source` (berth.placement, berth.baremetal, berth.internal),
 * `detail-type` (what happened), `time` (the change's), `detail`:
 *   version      "1": this shape
 *   id           the change id: the same for every delivery of one change (de-duplicate on it);
 *                per provider and per consumer, ids grow in commit order
 *   time         when the change was stamped (ISO 8601, ms)
 *   generation   what the change produced for its subject (a provider's or consumer's
 *                generation, a node's or allocation's version); null where there is none
 *   project_id, user_id   whose it is, where there is one
 *   subjects     the ids of what changed (provider and consumer uuids, names, nodes)
 *   before, after    each subject's state before and after, keyed by its id (null: absent)
 * and per kind a little more (a consumer change's `action`). Bare-metal events are named
 * and shaped as Ironic's notifications: `detail-type` is the `event_type`
 * (baremetal.node.provision_set.end, baremetal.allocation.create.end, …) and the detail
 * carries `priority`, `event_type`, `publisher_id`, `timestamp`, `message_id` and the
 * versioned `payload` (`ironic_object.name` NodeSetProvisionStatePayload 1.17, …) with the
 * fields Ironic's payload has, so a consumer of Ironic's notifications can map them.
 *
 * Pure.
 */
import { uuid5 } from '../compat/uuid.js';
import { eventBetween, UNSTABLE_STATES } from '../baremetal/states.js';
import { changesVisible, type Change, type ConsumerFact, type ProviderFact, type RecordFact } from './change.js';

export const EVENT_VERSION = '1';
export type EventSource = 'berth.placement' | 'berth.baremetal' | 'berth.internal';

export interface FeedEvent {
  source: EventSource;
  detailType: string;
  /** ISO 8601 */
  time: string;
  detail: Record<string, unknown>;
}

export interface EventOptions {
  /** the host Ironic's publisher_id names (the bare-metal API's conductor name) */
  host: string;
}

/** every detail-type, by source: the schema documents are named after them */
export const EVENT_TYPES: Record<EventSource, readonly string[]> = {
  'berth.placement': [
    'resource_provider.create',
    'resource_provider.update',
    'resource_provider.delete',
    'resource_provider.inventories.update',
    'resource_provider.traits.update',
    'resource_provider.aggregates.update',
    'consumer.allocations.update',
    'resource_class.create',
    'resource_class.update',
    'resource_class.delete',
    'trait.create',
    'trait.delete',
  ],
  'berth.baremetal': [
    'baremetal.node.create.end',
    'baremetal.node.update.end',
    'baremetal.node.delete.end',
    'baremetal.node.maintenance_set.end',
    'baremetal.node.provision_set.start',
    'baremetal.node.provision_set.end',
    'baremetal.node.provision_set.success',
    'baremetal.node.provision_set.error',
    'baremetal.node.power_set.start',
    'baremetal.node.power_set.end',
    'baremetal.node.power_set.error',
    'baremetal.allocation.create.end',
    'baremetal.allocation.update.end',
    'baremetal.allocation.delete.end',
  ],
  'berth.internal': ['internal.change'],
};

/** the namespace of message_id: uuid5(namespace, change id), the same for every delivery */
const MESSAGE_NS = '6f1d3c1e-25b4-5a8e-9d43-8f2b2b1c7e10';

const iso = (ms: number) => new Date(ms).toISOString();

function keyed<T extends { uuid: string }>(facts: T[] | undefined, side: 'before' | 'after'): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of facts ?? []) out[f.uuid] = (f as unknown as Record<string, unknown>)[side] ?? null;
  return out;
}

function base(c: Change, source: EventSource, detailType: string, extra: Record<string, unknown>): FeedEvent {
  return {
    source,
    detailType,
    time: iso(c.at),
    detail: { version: EVENT_VERSION, id: c.id, time: iso(c.at), type: detailType, ...extra },
  };
}

/** The one event of a committed change. */
export function eventOf(c: Change, opts: EventOptions): FeedEvent {
  switch (c.op) {
    case 'provider.create':
    case 'provider.update':
    case 'provider.delete':
    case 'provider.inventories':
    case 'provider.traits':
    case 'provider.aggregates':
    case 'node.provider':
      return providerEvent(c);
    case 'allocations.set':
    case 'allocations.delete':
    case 'allocations.reshape':
    case 'allocations.import':
    case 'allocations.migrate':
      return consumerEvent(c);
    case 'resource_class.create':
    case 'resource_class.update':
    case 'resource_class.delete':
    case 'trait.create':
    case 'trait.delete':
      return nameEvent(c);
    case 'node.create':
    case 'node.update':
    case 'node.delete':
      return nodeEvent(c, opts);
    case 'allocation.create':
    case 'allocation.backfill':
    case 'allocation.update':
    case 'allocation.reserve':
    case 'allocation.fail':
    case 'allocation.delete':
      return allocationEvent(c, opts);
    default:
      return internalEvent(c);
  }
}

function internalEvent(c: Change): FeedEvent {
  const subjects = [...(c.allocations ?? []), ...(c.nodes ?? [])].map((f) => f.uuid);
  return base(c, 'berth.internal', 'internal.change', {
    generation: null,
    project_id: null,
    user_id: null,
    subjects,
    before: {},
    after: {},
    note: c.note ?? c.op,
    ...placementSide(c),
  });
}

// ------------------------------------------------------------------ Placement

const PROVIDER_TYPES: Partial<Record<Change['op'], string>> = {
  'provider.create': 'resource_provider.create',
  'provider.update': 'resource_provider.update',
  'provider.delete': 'resource_provider.delete',
  'provider.inventories': 'resource_provider.inventories.update',
  'provider.traits': 'resource_provider.traits.update',
  'provider.aggregates': 'resource_provider.aggregates.update',
};

function providerEvent(c: Change): FeedEvent {
  const providers = c.providers ?? [];
  let type = PROVIDER_TYPES[c.op];
  // the scheduler migration brings a node's provider in line with its node
  if (!type) type = providers.some((p) => p.before === null) ? 'resource_provider.create' : 'resource_provider.update';
  const first = providers[0];
  const gen = first ? (first.after?.generation ?? first.before?.generation ?? null) : null;
  return base(c, 'berth.placement', type, {
    generation: gen,
    project_id: null,
    user_id: null,
    subjects: providers.map((p) => p.uuid),
    before: keyed(providers, 'before'),
    after: keyed(providers, 'after'),
    ...(c.consumers?.length ? { consumers: consumerList(c.consumers) } : {}),
  });
}

const CONSUMER_ACTIONS: Partial<Record<Change['op'], string>> = {
  'allocations.set': 'set',
  'allocations.delete': 'delete',
  'allocations.reshape': 'reshape',
  'allocations.import': 'import',
  'allocations.migrate': 'migrate',
};

function consumerList(consumers: ConsumerFact[]) {
  return consumers.map((f) => {
    const v = f.after ?? f.before;
    return {
      consumer_uuid: f.uuid,
      project_id: v?.project ?? null,
      user_id: v?.user ?? null,
      consumer_type: v?.type ?? null,
      generation: f.after?.generation ?? null,
      previous: f.prev,
    };
  });
}

function consumerEvent(c: Change): FeedEvent {
  const consumers = c.consumers ?? [];
  const one = consumers.length === 1 ? (consumers[0]!.after ?? consumers[0]!.before) : undefined;
  return base(c, 'berth.placement', 'consumer.allocations.update', {
    action: CONSUMER_ACTIONS[c.op] ?? 'set',
    generation: consumers.length === 1 ? (consumers[0]!.after?.generation ?? null) : null,
    project_id: one?.project ?? null,
    user_id: one?.user ?? null,
    subjects: consumers.map((f) => f.uuid),
    before: keyed(consumers, 'before'),
    after: keyed(consumers, 'after'),
    consumers: consumerList(consumers),
    // a reshape moves inventory too: each provider's before and after
    ...(c.providers?.length ? { resource_providers: providerList(c.providers) } : {}),
  });
}

function providerList(providers: ProviderFact[]) {
  return providers.map((p) => ({ uuid: p.uuid, before: p.before, after: p.after }));
}

function nameEvent(c: Change): FeedEvent {
  const names = c.names ?? [];
  const key = (n: string | null) => n ?? '';
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  for (const n of names) {
    const id = key(n.after ?? n.before);
    before[id] = n.before === null ? null : { name: n.before };
    after[id] = n.after === null ? null : { name: n.after };
  }
  return base(c, 'berth.placement', c.op, {
    generation: null,
    project_id: null,
    user_id: null,
    subjects: names.map((n) => key(n.after ?? n.before)),
    before,
    after,
  });
}

/** A bare-metal change's Placement side (BAREMETAL_SCHEDULER=placement): the node's provider, the allocation's consumer. */
function placementSide(c: Change): Record<string, unknown> {
  if (!c.providers?.length && !c.consumers?.length) return {};
  return {
    placement: {
      resource_providers: providerList(c.providers ?? []),
      consumers: consumerList(c.consumers ?? []),
      consumer_changes: c.consumers ?? [],
    },
  };
}

// ------------------------------------------------------------------ bare metal (Ironic's notifications)

/** the fields of Ironic's NodePayload 1.16 (ironic/objects/node.py), in its order */
export const NODE_PAYLOAD_FIELDS = [
  'clean_step',
  'conductor_group',
  'console_enabled',
  'created_at',
  'deploy_step',
  'description',
  'driver',
  'extra',
  'boot_mode',
  'secure_boot',
  'inspection_finished_at',
  'inspection_started_at',
  'instance_uuid',
  'last_error',
  'maintenance',
  'maintenance_reason',
  'fault',
  'bios_interface',
  'boot_interface',
  'console_interface',
  'deploy_interface',
  'inspect_interface',
  'management_interface',
  'network_interface',
  'power_interface',
  'raid_interface',
  'rescue_interface',
  'storage_interface',
  'vendor_interface',
  'name',
  'owner',
  'lessee',
  'power_state',
  'properties',
  'protected',
  'protected_reason',
  'provision_state',
  'provision_updated_at',
  'resource_class',
  'retired',
  'retired_reason',
  'target_power_state',
  'target_provision_state',
  'traits',
  'updated_at',
  'uuid',
] as const;

export const ALLOCATION_PAYLOAD_FIELDS = [
  'uuid',
  'name',
  'node_uuid',
  'state',
  'last_error',
  'owner',
  'resource_class',
  'traits',
  'candidate_nodes',
  'extra',
  'created_at',
  'updated_at',
] as const;

/**
 * Ironic's versioned payload of each bare-metal event (ironic/objects/node.py,
 * allocation.py): its name, version and the fields it adds to the base fields
 * (NODE_PAYLOAD_FIELDS, or ALLOCATION_PAYLOAD_FIELDS for allocations).
 */
export const IRONIC_PAYLOADS = {
  crud: { name: 'NodeCRUDPayload', version: '1.14', extra: ['chassis_uuid', 'instance_info', 'driver_info'] },
  provision: {
    name: 'NodeSetProvisionStatePayload',
    version: '1.17',
    extra: ['instance_info', 'driver_internal_info', 'event', 'previous_provision_state', 'previous_target_provision_state'],
  },
  power: { name: 'NodeSetPowerStatePayload', version: '1.16', extra: ['to_power'] },
  maintenance: { name: 'NodePayload', version: '1.16', extra: [] },
  allocation: { name: 'AllocationCRUDPayload', version: '1.1', extra: [] },
} as const;

/** which payload a bare-metal detail-type carries */
export function payloadOf(detailType: string): (typeof IRONIC_PAYLOADS)[keyof typeof IRONIC_PAYLOADS] {
  if (detailType.startsWith('baremetal.allocation.')) return IRONIC_PAYLOADS.allocation;
  if (detailType.startsWith('baremetal.node.provision_set.')) return IRONIC_PAYLOADS.provision;
  if (detailType.startsWith('baremetal.node.power_set.')) return IRONIC_PAYLOADS.power;
  if (detailType.startsWith('baremetal.node.maintenance_set.')) return IRONIC_PAYLOADS.maintenance;
  return IRONIC_PAYLOADS.crud;
}

const MASK = '******';
/** oslo's mask_dict_password keys that matter for a node's dicts, and Ironic's image_url rule */
const SECRET = /pass|secret|token|key|credential|auth/i;

function masked(d: unknown): unknown {
  if (!d || typeof d !== 'object' || Array.isArray(d)) return d ?? {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(d)) out[k] = SECRET.test(k) ? MASK : v && typeof v === 'object' && !Array.isArray(v) ? masked(v) : v;
  return out;
}

function pick(r: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) out[f] = r[f] ?? null;
  return out;
}

function nodePayload(node: Record<string, unknown>, type: string, more: Record<string, unknown>): Record<string, unknown> {
  const p = payloadOf(type);
  return {
    'ironic_object.namespace': 'ironic',
    'ironic_object.name': p.name,
    'ironic_object.version': p.version,
    'ironic_object.data': { ...pick(node, NODE_PAYLOAD_FIELDS), traits: (node.traits as string[] | null) ?? [], ...more },
  };
}

function notification(
  c: Change,
  opts: EventOptions,
  eventType: string,
  priority: 'info' | 'error',
  service: 'ironic-api' | 'ironic-conductor',
  payload: Record<string, unknown>,
): Record<string, unknown> {
  return {
    priority,
    event_type: eventType,
    publisher_id: `${service}.${opts.host}`,
    timestamp: iso(c.at).replace('T', ' ').replace('Z', ''),
    message_id: uuid5(MESSAGE_NS, c.id),
    payload,
  };
}

function bareEnvelope(c: Change, project: unknown, generation: unknown): Record<string, unknown> {
  const records = [...(c.nodes ?? []), ...(c.allocations ?? [])];
  return {
    generation: typeof generation === 'number' ? generation : null,
    project_id: typeof project === 'string' ? project : null,
    user_id: null,
    subjects: records.map((r) => r.uuid),
    before: keyed(records, 'before'),
    after: keyed(records, 'after'),
    ...placementSide(c),
  };
}

function nodeEvent(c: Change, opts: EventOptions): FeedEvent {
  const f = c.nodes![0]!;
  const node = (f.after ?? f.before ?? { uuid: f.uuid }) as Record<string, unknown>;
  const env = bareEnvelope(c, node.owner, node.ver);
  const crud = (action: 'create' | 'update' | 'delete') => {
    const type = `baremetal.node.${action}.end`;
    const payload = nodePayload(node, type, {
      chassis_uuid: null,
      instance_info: masked(node.instance_info),
      driver_info: masked(node.driver_info),
    });
    return base(c, 'berth.baremetal', type, { ...env, ...notification(c, opts, type, 'info', 'ironic-api', payload) });
  };
  if (c.op === 'node.create') return crud('create');
  if (c.op === 'node.delete') return crud('delete');
  if (!changesVisible(f)) return internalEvent({ ...c, note: c.note ?? 'a node action took or gave back the node (its lock)' });
  const before = f.before ?? {};
  const has = (k: string) => Object.hasOwn(before, k);
  if (has('provision_state') || has('target_provision_state')) {
    const prev = (has('provision_state') ? before.provision_state : node.provision_state) as string | null;
    const prevTarget = (has('target_provision_state') ? before.target_provision_state : node.target_provision_state) as string | null;
    const state = node.provision_state as string | null;
    const event = has('provision_state') && prev !== null && state !== null ? eventBetween(prev, state) : null;
    const prevUnstable = prev !== null && UNSTABLE_STATES.includes(prev);
    const nowUnstable = state !== null && UNSTABLE_STATES.includes(state);
    // ironic/conductor/task_manager.py _notify_provision_state_change
    const status =
      event === 'fail' || event === 'error'
        ? 'error'
        : !has('provision_state')
          ? 'start'
          : !prevUnstable && nowUnstable
            ? 'start'
            : prevUnstable && !nowUnstable
              ? 'end'
              : 'success';
    const type = `baremetal.node.provision_set.${status}`;
    const payload = nodePayload(node, type, {
      instance_info: masked(node.instance_info),
      driver_internal_info: masked(node.driver_internal_info),
      event,
      previous_provision_state: prev,
      previous_target_provision_state: prevTarget,
    });
    return base(c, 'berth.baremetal', type, {
      ...env,
      ...notification(c, opts, type, status === 'error' ? 'error' : 'info', 'ironic-conductor', payload),
    });
  }
  if (has('power_state') || has('target_power_state')) {
    const prevTarget = (has('target_power_state') ? before.target_power_state : node.target_power_state) as string | null;
    const target = node.target_power_state as string | null;
    const failed = has('last_error') && node.last_error !== null && target === null;
    const status = target !== null && prevTarget === null ? 'start' : failed ? 'error' : 'end';
    const type = `baremetal.node.power_set.${status}`;
    const payload = nodePayload(node, type, { to_power: target ?? prevTarget ?? node.power_state ?? null });
    return base(c, 'berth.baremetal', type, {
      ...env,
      ...notification(c, opts, type, status === 'error' ? 'error' : 'info', 'ironic-conductor', payload),
    });
  }
  if (has('maintenance')) {
    const type = 'baremetal.node.maintenance_set.end';
    return base(c, 'berth.baremetal', type, {
      ...env,
      ...notification(c, opts, type, 'info', 'ironic-api', nodePayload(node, type, {})),
    });
  }
  return crud('update');
}

const ALLOCATION_TYPES: Partial<Record<Change['op'], string>> = {
  'allocation.create': 'baremetal.allocation.create.end',
  'allocation.backfill': 'baremetal.allocation.create.end',
  'allocation.update': 'baremetal.allocation.update.end',
  'allocation.reserve': 'baremetal.allocation.update.end',
  'allocation.fail': 'baremetal.allocation.update.end',
  'allocation.delete': 'baremetal.allocation.delete.end',
};

function allocationEvent(c: Change, opts: EventOptions): FeedEvent {
  const f: RecordFact = c.allocations![0]!;
  const a = (f.after ?? f.before ?? { uuid: f.uuid }) as Record<string, unknown>;
  const type = ALLOCATION_TYPES[c.op]!;
  const data = pick(a, ALLOCATION_PAYLOAD_FIELDS);
  data.traits = (a.traits as string[] | null) ?? [];
  data.candidate_nodes = (a.candidate_nodes as string[] | null) ?? [];
  data.extra = a.extra ?? {};
  const p = payloadOf(type);
  const payload = {
    'ironic_object.namespace': 'ironic',
    'ironic_object.name': p.name,
    'ironic_object.version': p.version,
    'ironic_object.data': data,
  };
  const env = bareEnvelope(c, a.owner, a.ver);
  return base(c, 'berth.baremetal', type, {
    ...env,
    ...notification(c, opts, type, 'info', c.op === 'allocation.reserve' || c.op === 'allocation.fail' ? 'ironic-conductor' : 'ironic-api', payload),
  });
}

/** the key one event is ordered by, per subject: its subjects' ids (tests check per-key order on them) */
export function subjectsOf(e: FeedEvent): string[] {
  return (e.detail.subjects as string[]) ?? [];
}
