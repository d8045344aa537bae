/**
 * Bare metal's events (source berth.baremetal), named and shaped as Ironic's
 * notifications: `detail-type` is the `event_type`, the detail carries `priority`,
 * `event_type`, `publisher_id`, `timestamp`, `message_id` and the versioned `payload`
 * with the fields Ironic's payload has (ironic/objects/node.py, allocation.py). Pure.
 */
import { uuid5 } from '../compat/uuid.js';
import { eventBetween, UNSTABLE_STATES } from '../baremetal/states.js';
import { changesVisible, type Change, type RecordFact } from './change.js';
import { baseEvent, type EventOptions, type FeedEvent, iso, keyed } from './event-envelope.js';
import { internalEvent, placementSide } from './placement-events.js';

/** the namespace of message_id: uuid5(namespace, change id), the same for every delivery */
const MESSAGE_NS = '6f1d3c1e-25b4-5a8e-9d43-8f2b2b1c7e10';

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

export function nodeEvent(c: Change, opts: EventOptions): FeedEvent {
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
    return baseEvent(c, 'berth.baremetal', type, { ...env, ...notification(c, opts, type, 'info', 'ironic-api', payload) });
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
    return baseEvent(c, 'berth.baremetal', type, {
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
    return baseEvent(c, 'berth.baremetal', type, {
      ...env,
      ...notification(c, opts, type, status === 'error' ? 'error' : 'info', 'ironic-conductor', payload),
    });
  }
  if (has('maintenance')) {
    const type = 'baremetal.node.maintenance_set.end';
    return baseEvent(c, 'berth.baremetal', type, {
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

export function allocationEvent(c: Change, opts: EventOptions): FeedEvent {
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
  return baseEvent(c, 'berth.baremetal', type, {
    ...env,
    ...notification(c, opts, type, 'info', c.op === 'allocation.reserve' || c.op === 'allocation.fail' ? 'ironic-conductor' : 'ironic-api', payload),
  });
}
