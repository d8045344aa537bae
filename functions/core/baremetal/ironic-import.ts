/**
 * Moving in from a running Ironic (`npx berth import-ironic`, `verify-ironic`), pure:
 * a node or an allocation as Ironic's API shows it (GET /v1/nodes/detail,
 * GET /v1/allocations at a microversion of at least MIN_MINOR) becomes Berth's record;
 * what keeps one from being imported as it is (an action in progress, a state Berth's
 * state machine does not have, fields the importing credentials may not read, links
 * between nodes and allocations that do not hold); the creation order; and the
 * field-by-field comparison of two API views that verify prints.
 *
 * Nothing is guessed: a node whose conductor is working on it (a transitional provision
 * state, a power action under way, a lock) is refused with the reason, never imported
 * as if the work had ended. Failure states (deploy failed, clean failed, …) are resting
 * states — no conductor works on the node until an operator acts, and Berth's state
 * machine continues from each of them — so they are imported as they are.
 */
import type { AllocationRecord, NodeRecord } from './records.js';
import { ALL_STATES, UNSTABLE_STATES } from './states.js';
import { ALLOCATION_STATES } from './allocations.js';

/** the microversion reads are made at: Berth's newest (Ironic 21.1, Zed), or the source's newest if older */
export const MAX_MINOR = 80;
/** the oldest microversion whose node shows every field Berth keeps (boot_mode and secure_boot came in 1.75, Xena) */
export const MIN_MINOR = 75;

/** the node fields Berth keeps that come from Ironic (vifs are read separately; the rest is Berth's own bookkeeping) */
export type CarriedNodeField = Exclude<keyof NodeRecord, 'vifs' | 'lock' | 'lock_action' | 'ver' | 'seq'>;

type Kind = 'uuid' | 'uuid?' | 'string' | 'string?' | 'boolean' | 'boolean?' | 'dict' | 'strings';

/** Every field of Berth's node record Ironic shows, with the JSON type it must have (the compiler holds this to NodeRecord). */
export const NODE_FIELDS_FROM_IRONIC: { readonly [K in CarriedNodeField]: Kind } = {
  uuid: 'uuid',
  name: 'string?',
  driver: 'string',
  driver_info: 'dict',
  driver_internal_info: 'dict',
  properties: 'dict',
  extra: 'dict',
  instance_info: 'dict',
  instance_uuid: 'string?',
  allocation_uuid: 'uuid?',
  resource_class: 'string?',
  provision_state: 'string',
  target_provision_state: 'string?',
  provision_updated_at: 'string?',
  power_state: 'string?',
  target_power_state: 'string?',
  maintenance: 'boolean',
  maintenance_reason: 'string?',
  fault: 'string?',
  last_error: 'string?',
  owner: 'string?',
  lessee: 'string?',
  description: 'string?',
  conductor_group: 'string',
  protected: 'boolean',
  protected_reason: 'string?',
  retired: 'boolean',
  retired_reason: 'string?',
  automated_clean: 'boolean?',
  console_enabled: 'boolean',
  network_data: 'dict',
  boot_mode: 'string?',
  secure_boot: 'boolean?',
  clean_step: 'dict',
  deploy_step: 'dict',
  raid_config: 'dict',
  target_raid_config: 'dict',
  inspection_started_at: 'string?',
  inspection_finished_at: 'string?',
  traits: 'strings',
  bios_interface: 'string?',
  boot_interface: 'string?',
  console_interface: 'string?',
  deploy_interface: 'string?',
  inspect_interface: 'string?',
  management_interface: 'string?',
  network_interface: 'string?',
  power_interface: 'string?',
  raid_interface: 'string?',
  rescue_interface: 'string?',
  storage_interface: 'string?',
  vendor_interface: 'string?',
  created_at: 'string',
  updated_at: 'string?',
};

export type CarriedAllocationField = Exclude<keyof AllocationRecord, 'exec' | 'exec_at' | 'resumes' | 'consumer_project' | 'consumer_user' | 'seq'>;

/** Every field of Berth's allocation record Ironic shows. */
export const ALLOCATION_FIELDS_FROM_IRONIC: { readonly [K in CarriedAllocationField]: Kind } = {
  uuid: 'uuid',
  name: 'string?',
  resource_class: 'string',
  traits: 'strings',
  candidate_nodes: 'strings',
  extra: 'dict',
  owner: 'string?',
  state: 'string',
  last_error: 'string?',
  node_uuid: 'uuid?',
  created_at: 'string',
  updated_at: 'string?',
};

/**
 * Fields Ironic shows that Berth does not keep, and why nothing is lost with them:
 * links (derived from the uuid and the endpoint), the conductor's host name (Berth names
 * its own), the lock (must be empty: checked). `chassis_uuid` is lost when set (Berth
 * serves no chassis); anything else with a value is reported as dropped.
 */
const DERIVED_NODE_FIELDS = new Set(['links', 'ports', 'states', 'portgroups', 'volume', 'conductor', 'reservation']);
const DERIVED_ALLOCATION_FIELDS = new Set(['links']);

/** the value Ironic shows instead of a secret (strutils.mask_dict_password, node_sanitize) */
export const MASK = '******';
const REDACTED = /\*\* (Value )?Redacted - [Rr]equires /;

/** A node or allocation as Ironic's API shows it. */
export type IronicObject = Record<string, unknown>;

export interface Imported<R> {
  record: R;
  /** why it cannot be imported as it is (empty: it can) */
  blockers: string[];
  /** fields Ironic shows with a value that Berth does not keep (e.g. chassis_uuid) */
  dropped: string[];
  /** paths of secrets Ironic showed masked (stored as the mask: the value is not carried) */
  masked: string[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function isDict(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** does `v` fit `kind`? (null only where Ironic's field is nullable) */
function fits(v: unknown, kind: Kind): boolean {
  const nullable = kind.endsWith('?');
  if (v === null) return nullable;
  switch (kind.replace('?', '')) {
    case 'uuid':
      return typeof v === 'string' && UUID.test(v);
    case 'string':
      return typeof v === 'string';
    case 'boolean':
      return typeof v === 'boolean';
    case 'dict':
      return isDict(v);
    case 'strings':
      return Array.isArray(v) && v.every((x) => typeof x === 'string');
  }
  return false;
}

/** copy the carried fields, checking each one's type; problems as blockers */
function carry<F extends string>(j: IronicObject, fields: { readonly [K in F]: Kind }, derived: ReadonlySet<string>) {
  const record: Record<string, unknown> = {};
  const blockers: string[] = [];
  const dropped: string[] = [];
  for (const [f, kind] of Object.entries(fields) as [string, Kind][]) {
    if (!(f in j)) blockers.push(`Ironic's answer has no ${f} (is this Ironic's API at microversion 1.${MIN_MINOR} or newer?)`);
    else if (!fits(j[f], kind)) blockers.push(`${f} is ${JSON.stringify(j[f])}, not a ${kind.replace('?', '')}`);
    else record[f] = structuredClone(j[f]);
  }
  for (const [k, v] of Object.entries(j)) {
    if (k in fields || derived.has(k)) continue;
    if (v !== null && v !== undefined && !(isDict(v) && !Object.keys(v).length) && !(Array.isArray(v) && !v.length)) dropped.push(k);
  }
  return { record, blockers, dropped };
}

/** paths of values that are the mask (`driver_info.ipmi_password`) */
function maskedPaths(v: unknown, path: string, out: string[]): string[] {
  if (v === MASK) out.push(path);
  else if (isDict(v)) for (const [k, x] of Object.entries(v)) maskedPaths(x, `${path}.${k}`, out);
  return out;
}

/** does anything under `v` carry Ironic's redaction text? */
function redacted(v: unknown): boolean {
  if (typeof v === 'string') return REDACTED.test(v);
  if (isDict(v)) return Object.values(v).some(redacted);
  if (Array.isArray(v)) return v.some(redacted);
  return false;
}

/** Why a node's state keeps it from being imported now (undefined: it can be). */
export function nodeStateBlocker(n: { provision_state?: unknown; target_power_state?: unknown; reservation?: unknown }): string | undefined {
  const ps = String(n.provision_state);
  if (UNSTABLE_STATES.includes(ps)) return `provision state "${ps}": an action is in progress (wait until it ends, or abort it)`;
  if (!ALL_STATES.includes(ps)) return `provision state "${ps}" is not one Berth's state machine has (finish or abort what it waits for)`;
  if (n.target_power_state !== null && n.target_power_state !== undefined)
    return `a power action to "${String(n.target_power_state)}" is in progress (wait until it ends)`;
  if (n.reservation !== null && n.reservation !== undefined && !redacted(n.reservation))
    return `locked by conductor ${String(n.reservation)}: an action is in progress (wait until it ends)`;
  return undefined;
}

/**
 * A node as Ironic shows it → the fields of Berth's node record (all of
 * NODE_FIELDS_FROM_IRONIC; Berth's own bookkeeping — vifs, seq, ver, lock — is the
 * caller's), with what keeps it from being imported.
 */
export function nodeFromIronic(j: IronicObject): Imported<Pick<NodeRecord, CarriedNodeField>> {
  const { record, blockers, dropped } = carry(j, NODE_FIELDS_FROM_IRONIC, DERIVED_NODE_FIELDS);
  const state = nodeStateBlocker(j);
  if (state) blockers.unshift(state);
  for (const f of ['driver_info', 'driver_internal_info', 'last_error', 'reservation', 'instance_info']) {
    if (redacted(j[f])) blockers.push(`Ironic redacts ${f} for these credentials (import as a system-scoped admin)`);
  }
  const masked = [
    ...maskedPaths(j.driver_info, 'driver_info', []),
    ...maskedPaths(j.instance_info, 'instance_info', []),
    ...maskedPaths(j.driver_internal_info, 'driver_internal_info', []),
  ];
  return { record: record as Pick<NodeRecord, CarriedNodeField>, blockers, dropped, masked };
}

/** An allocation as Ironic shows it → the fields of Berth's allocation record, with what keeps it from being imported. */
export function allocationFromIronic(j: IronicObject): Imported<Pick<AllocationRecord, CarriedAllocationField>> {
  const { record, blockers, dropped } = carry(j, ALLOCATION_FIELDS_FROM_IRONIC, DERIVED_ALLOCATION_FIELDS);
  if (j.state === ALLOCATION_STATES.ALLOCATING) blockers.unshift('state "allocating": Ironic is still looking for its node (wait until it ends)');
  else if (j.state !== ALLOCATION_STATES.ACTIVE && j.state !== ALLOCATION_STATES.ERROR)
    blockers.unshift(`state "${String(j.state)}" is not one Berth knows`);
  else if (j.state === ALLOCATION_STATES.ACTIVE && !j.node_uuid) blockers.push('active, yet it names no node');
  return { record: record as Pick<AllocationRecord, CarriedAllocationField>, blockers, dropped, masked: [] };
}

type LinkNode = Pick<NodeRecord, 'uuid' | 'instance_uuid' | 'allocation_uuid'>;
type LinkAllocation = Pick<AllocationRecord, 'uuid' | 'state' | 'node_uuid'>;

/**
 * The links Berth holds as invariants (and Ironic's API maintains): a node's
 * allocation is active and bound to it, its uuid the node's instance_uuid; an active
 * allocation's node names it back; an allocation's uuid is no other node's instance.
 * What does not hold, per object uuid.
 */
export function linkProblems(nodes: readonly LinkNode[], allocations: readonly LinkAllocation[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (uuid: string, why: string) => out.set(uuid, [...(out.get(uuid) ?? []), why]);
  const byNode = new Map(nodes.map((n) => [n.uuid, n]));
  const byAlloc = new Map(allocations.map((a) => [a.uuid, a]));
  const instanceOf = new Map(nodes.filter((n) => n.instance_uuid).map((n) => [n.instance_uuid!, n.uuid]));
  for (const n of nodes) {
    if (!n.allocation_uuid) continue;
    const a = byAlloc.get(n.allocation_uuid);
    if (!a) add(n.uuid, `its allocation ${n.allocation_uuid} is not in Ironic's allocation list`);
    else if (a.state !== ALLOCATION_STATES.ACTIVE || a.node_uuid !== n.uuid)
      add(n.uuid, `its allocation ${a.uuid} is ${a.state} on ${a.node_uuid ?? 'no node'}, not active on it`);
    else if (n.instance_uuid !== a.uuid) add(n.uuid, `its instance_uuid ${n.instance_uuid} is not its allocation's uuid ${a.uuid}`);
  }
  for (const a of allocations) {
    if (a.state === ALLOCATION_STATES.ACTIVE && a.node_uuid) {
      const n = byNode.get(a.node_uuid);
      if (!n) add(a.uuid, `its node ${a.node_uuid} is not in Ironic's node list`);
      else if (n.allocation_uuid !== a.uuid) add(a.uuid, `its node ${a.node_uuid} names allocation ${n.allocation_uuid ?? 'none'}`);
    } else {
      const holder = instanceOf.get(a.uuid);
      if (holder) add(a.uuid, `its uuid is the instance_uuid of node ${holder}, which it is not bound to`);
    }
  }
  return out;
}

/** microseconds since the epoch of Python's isoformat() (`2026-11-22T07:41:52.877259+00:00`); NaN if it is not one */
export function isoMicros(s: string): number {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?(Z|[+-]\d\d:\d\d)?$/.exec(s);
  if (!m) return Number.NaN;
  const ms = Date.parse(`${m[1]}${m[3] ?? 'Z'}`);
  return ms * 1000 + Number((m[2] ?? '').padEnd(6, '0') || '0');
}

/**
 * Berth's creation sequence for objects listed in Ironic's order (by its internal id:
 * creation order): the creation time in microseconds, kept strictly increasing, so
 * Berth lists them in Ironic's order, before anything created in Berth afterwards
 * (whose sequence is the time of its creation), and a second pass computes the same.
 */
export function creationSeqs(createdAts: readonly string[]): number[] {
  let prev = 0;
  return createdAts.map((c) => {
    const t = isoMicros(c);
    prev = Math.max(Number.isFinite(t) ? t : 0, prev + 1);
    return prev;
  });
}

// ------------------------------------------------------------------ comparing two views

export interface ViewDifference {
  field: string;
  ironic: unknown;
  berth: unknown;
}

/** JSON with object keys sorted (a dict's key order means nothing; a list's order does) */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x) => (isDict(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x));
}

/** an href without its scheme and host (`/v1/nodes/<uuid>`): the two APIs live at different addresses */
function withoutHosts(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutHosts);
  if (isDict(v))
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => [k, k === 'href' && typeof x === 'string' ? x.replace(/^[a-z]+:\/\/[^/]+/i, '') : withoutHosts(x)]),
    );
  return v;
}

export interface CompareOptions {
  /** fields not compared (the conductor's host name) */
  ignore?: ReadonlySet<string>;
  /** list fields compared as sets (a node's traits) */
  unordered?: ReadonlySet<string>;
}

/** Field by field: every top-level field either view shows, compared as JSON (links without hosts). */
export function viewDifferences(ironic: IronicObject, berth: IronicObject, opts: CompareOptions = {}): ViewDifference[] {
  const out: ViewDifference[] = [];
  const fields = [...new Set([...Object.keys(ironic), ...Object.keys(berth)])].sort();
  for (const f of fields) {
    if (opts.ignore?.has(f)) continue;
    let a = withoutHosts(ironic[f]);
    let b = withoutHosts(berth[f]);
    if (opts.unordered?.has(f) && Array.isArray(a) && Array.isArray(b)) {
      a = [...a].map(canonical).sort();
      b = [...b].map(canonical).sort();
    }
    if (!(f in ironic) || !(f in berth) || canonical(a) !== canonical(b)) {
      out.push({ field: f, ironic: f in ironic ? ironic[f] : '(absent)', berth: f in berth ? berth[f] : '(absent)' });
    }
  }
  return out;
}
