/**
 * Node and allocation representations (node_convert_with_links + node_sanitize,
 * allocation.convert_with_links): field order, links, fields=, version gating and
 * secret masking as Ironic renders them.
 */
import { S } from '../core/baremetal/states.js';
import type { AllocationRecord, NodeRecord } from '../core/baremetal/records.js';
import { Err } from '../core/baremetal/errors.js';
import { makeLink, selfLinks, type BmRequest } from './framework/app.js';
import { V, disallowedFields } from './framework/versions.js';
import { config } from '../config.js';

/** the conductor name Berth reports for every node (there is no conductor to pick) */
export function conductorName(): string {
  return config().baremetal.conductorName;
}

/** _get_fields_for_node_query's valid_fields, in that order */
export const NODE_FIELDS = [
  'automated_clean',
  'bios_interface',
  'boot_interface',
  'boot_mode',
  'clean_step',
  'conductor_group',
  'console_enabled',
  'console_interface',
  'deploy_interface',
  'deploy_step',
  'description',
  'driver',
  'driver_info',
  'driver_internal_info',
  'extra',
  'fault',
  'inspection_finished_at',
  'inspection_started_at',
  'inspect_interface',
  'instance_info',
  'instance_uuid',
  'last_error',
  'lessee',
  'maintenance',
  'maintenance_reason',
  'management_interface',
  'name',
  'network_data',
  'network_interface',
  'owner',
  'power_interface',
  'power_state',
  'properties',
  'protected',
  'protected_reason',
  'provision_state',
  'provision_updated_at',
  'raid_config',
  'raid_interface',
  'rescue_interface',
  'reservation',
  'resource_class',
  'retired',
  'retired_reason',
  'secure_boot',
  'shard',
  'storage_interface',
  'target_power_state',
  'target_provision_state',
  'target_raid_config',
  'traits',
  'vendor_interface',
] as const;

const API_FULFILLED = ['allocation_uuid', 'chassis_uuid', 'conductor'];

/** _DEFAULT_RETURN_FIELDS of GET /v1/nodes */
export const NODE_DEFAULT_LIST_FIELDS = ['instance_uuid', 'maintenance', 'power_state', 'provision_state', 'uuid', 'name'];

const SANITIZE_KEYS = [
  'adminpass',
  'admin_pass',
  'password',
  'admin_password',
  'auth_token',
  'new_pass',
  'auth_password',
  'secret_uuid',
  'secret',
  'sys_pswd',
  'token',
  'configdrive',
  'chappassword',
  'encrypted_key',
  'private_key',
  'fernetkey',
  'sslkey',
  'passphrase',
  'cephclusterfsid',
  'octaviaheartbeatkey',
  'rabbitcookie',
  'cephmanilaclientkey',
  'pacemakerremoteauthkey',
  'designaterndckey',
  'cephadminkey',
  'heatauthencryptionkey',
  'cephclientkey',
  'keystonecredential',
  'barbicansimplecryptokek',
  'cephrgwkey',
  'swifthashsuffix',
  'migrationsshkey',
  'cephmdskey',
  'cephmonkey',
];

/** strutils.mask_dict_password (key-based masking) */
export function maskDictPassword(d: Record<string, unknown>, secret = '******'): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(d)) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      out[k] = maskDictPassword(v as Record<string, unknown>, secret);
      continue;
    }
    out[k] = SANITIZE_KEYS.some((s) => k.toLowerCase().includes(s)) ? secret : v;
  }
  return out;
}

/** the object fields a fields= list asks for (and the check Ironic makes on them) */
export function nodeQueryFields(fields: string[] | undefined): string[] {
  if (!fields) return [...NODE_FIELDS];
  const valid = new Set<string>(['uuid', 'traits', ...API_FULFILLED, ...NODE_FIELDS]);
  for (const f of fields) if (!valid.has(f)) throw Err.invalid(`Field ${f} is not a valid field.`);
  return fields.filter((f) => !API_FULFILLED.includes(f));
}

function nodeValue(n: NodeRecord, f: string): unknown {
  switch (f) {
    case 'reservation':
      return n.lock ? conductorName() : null;
    case 'shard':
      return null;
    default:
      return (n as unknown as Record<string, unknown>)[f] ?? null;
  }
}

export interface NodeSanitizer {
  showDriverSecrets: boolean;
  showInstanceSecrets: boolean;
  evaluateAdditional: boolean;
}

/** the policy answers node_sanitize needs (computed once per list) */
export function nodeSanitizer(r: BmRequest): NodeSanitizer {
  return {
    showDriverSecrets: r.check('show_password'),
    showInstanceSecrets: r.check('show_instance_secrets'),
    evaluateAdditional: !r.allowed('baremetal:node:get:filter_threshold'),
  };
}

export function ownerTarget(kind: 'node' | 'allocation', owner: string | null, lessee?: string | null): Record<string, unknown> {
  const t: Record<string, unknown> = { [`${kind}.owner`]: owner };
  if (lessee) t[`${kind}.lessee`] = lessee;
  return t;
}

/** node_convert_with_links + node_sanitize */
export function nodeView(r: BmRequest, n: NodeRecord, fields?: string[], sanitizer: NodeSanitizer = nodeSanitizer(r)): Record<string, unknown> {
  const minor = r.minor;
  const out: Record<string, unknown> = {};
  out.uuid = n.uuid;
  out.created_at = n.created_at;
  out.updated_at = n.updated_at ?? null;
  for (const f of nodeQueryFields(fields)) {
    if (f === 'uuid') continue;
    out[f] = nodeValue(n, f);
  }
  out.links = selfLinks(r, 'nodes', n.uuid);
  if (minor >= V.CONDUCTORS && (!fields || fields.includes('conductor'))) out.conductor = conductorName();
  if (minor >= V.ALLOCATION && (!fields || fields.includes('allocation_uuid'))) out.allocation_uuid = n.allocation_uuid ?? null;
  if (!fields || fields.includes('chassis_uuid')) out.chassis_uuid = null;
  if (fields) {
    const invalid = fields.filter((f) => !(f in out));
    if (invalid.length) throw Err.invalid(`Field(s) "${invalid.join(', ')}" are not valid`);
  } else {
    const sub = (what: string) => [makeLink(r, 'self', 'nodes', `${n.uuid}/${what}`), makeLink(r, 'bookmark', 'nodes', `${n.uuid}/${what}`, true)];
    out.ports = sub('ports');
    if (minor >= V.LINKS_NODESTATES) out.states = sub('states');
    if (minor >= V.PORTGROUPS_SUBCONTROLLERS) out.portgroups = sub('portgroups');
    if (minor >= V.VOLUME) out.volume = sub('volume');
  }
  // ---- node_sanitize ----
  if (fields) for (const k of Object.keys(out)) if (!fields.includes(k) && k !== 'links') delete out[k];
  const target = { ...ownerTarget('node', n.owner, n.lessee) };
  if (sanitizer.evaluateAdditional) {
    if ('last_error' in out && !r.check('baremetal:node:get:last_error', target)) {
      out.last_error = '** Value Redacted - Requires baremetal:node:get:last_error permission. **';
    }
    if ('reservation' in out && !r.check('baremetal:node:get:reservation', target)) {
      out.reservation = '** Redacted - requires baremetal:node:get:reservation permission. **';
    }
    if ('driver_internal_info' in out && !r.check('baremetal:node:get:driver_internal_info', target)) {
      out.driver_internal_info = { content: '** Redacted - Requires baremetal:node:get:driver_internal_info permission. **' };
    }
  }
  if ('driver_info' in out) {
    if (sanitizer.evaluateAdditional && !r.check('baremetal:node:get:driver_info', target)) {
      out.driver_info = { content: '** Redacted - requires baremetal:node:get:driver_info permission. **' };
    }
    if (!sanitizer.showDriverSecrets) out.driver_info = maskDictPassword(out.driver_info as Record<string, unknown>);
  }
  if (!sanitizer.showInstanceSecrets && 'instance_info' in out) {
    const ii = maskDictPassword(out.instance_info as Record<string, unknown>);
    if (ii.configdrive) ii.configdrive = '******';
    if (ii.image_url) ii.image_url = '******';
    out.instance_info = ii;
  }
  const dii = out.driver_internal_info as Record<string, unknown> | undefined;
  if (dii?.agent_secret_token) out.driver_internal_info = { ...dii, agent_secret_token: '******' };
  if ('provision_state' in out) {
    if (minor < V.AVAILABLE_STATE && out.provision_state === S.AVAILABLE) out.provision_state = null;
    if (minor < V.INSPECT_WAIT && out.provision_state === S.INSPECTWAIT) out.provision_state = S.INSPECTING;
  }
  for (const f of disallowedFields(minor)) delete out[f];
  return out;
}

/** node_states_convert (GET /v1/nodes/{node}/states) */
export function nodeStatesView(r: BmRequest, n: NodeRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {
    console_enabled: n.console_enabled,
    last_error: n.last_error,
    power_state: n.power_state,
    provision_state: n.provision_state,
    target_power_state: n.target_power_state,
    target_provision_state: n.target_provision_state,
    provision_updated_at: n.provision_updated_at,
  };
  if (r.minor >= V.RAID_CONFIG) {
    out.raid_config = n.raid_config;
    out.target_raid_config = n.target_raid_config;
  }
  if (r.minor >= V.NODE_BOOT_MODE) {
    out.boot_mode = n.boot_mode;
    out.secure_boot = n.secure_boot;
  }
  if (r.minor < V.AVAILABLE_STATE && out.provision_state === S.AVAILABLE) out.provision_state = null;
  if (r.minor < V.INSPECT_WAIT && out.provision_state === S.INSPECTWAIT) out.provision_state = S.INSPECTING;
  return out;
}

/** allocation.convert_with_links + allocation_sanitize */
export function allocationView(r: BmRequest, a: AllocationRecord, fields?: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {
    uuid: a.uuid,
    created_at: a.created_at,
    updated_at: a.updated_at ?? null,
    candidate_nodes: a.candidate_nodes ?? [],
    extra: a.extra ?? {},
    last_error: a.last_error ?? null,
    name: a.name ?? null,
    owner: a.owner ?? null,
    resource_class: a.resource_class,
    state: a.state,
    traits: a.traits ?? [],
    links: selfLinks(r, 'allocations', a.uuid),
    node_uuid: a.node_uuid ?? null,
  };
  if (fields) {
    const invalid = fields.filter((f) => !(f in out));
    if (invalid.length) throw Err.invalid(`Field(s) "${invalid.join(', ')}" are not valid`);
  }
  if (r.minor < V.ALLOCATION_OWNER) delete out.owner;
  if (fields) for (const k of Object.keys(out)) if (!fields.includes(k) && k !== 'links') delete out[k];
  return out;
}

/** collection.list_convert_with_links' next link */
export function nextLink(
  r: BmRequest,
  resource: string,
  items: Array<{ uuid: string }>,
  limit: number,
  args: Record<string, string>,
): string | undefined {
  if (!items.length || items.length !== limit) return undefined;
  const q = Object.entries(args)
    .map(([k, v]) => `${k}=${v}&`)
    .join('');
  return makeLink(r, 'next', resource, `?${q}limit=${limit}&marker=${items[items.length - 1]!.uuid}`).href;
}
