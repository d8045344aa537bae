/**
 * The bare-metal domain as Ironic defines it (ironic/common/states.py,
 * ironic/conductor/allocations.py, ironic/common/utils.py): node provision states and
 * the state machine, names, the allocation candidate rules and Ironic's last_error
 * texts. Pure: no storage, no HTTP.
 */

// ------------------------------------------------------------------ states

export const S = {
  ENROLL: 'enroll',
  VERIFYING: 'verifying',
  MANAGEABLE: 'manageable',
  AVAILABLE: 'available',
  ACTIVE: 'active',
  DEPLOYWAIT: 'wait call-back',
  DEPLOYING: 'deploying',
  DEPLOYFAIL: 'deploy failed',
  DELETING: 'deleting',
  CLEANING: 'cleaning',
  CLEANWAIT: 'clean wait',
  CLEANFAIL: 'clean failed',
  ERROR: 'error',
  INSPECTING: 'inspecting',
  INSPECTFAIL: 'inspect failed',
  INSPECTWAIT: 'inspect wait',
  ADOPTING: 'adopting',
  ADOPTFAIL: 'adopt failed',
  RESCUE: 'rescue',
  RESCUEFAIL: 'rescue failed',
  RESCUEWAIT: 'rescue wait',
  RESCUING: 'rescuing',
  UNRESCUEFAIL: 'unrescue failed',
  UNRESCUING: 'unrescuing',
} as const;

/** API targets (PUT .../states/provision {"target": ...}) -> state machine events */
export const VERBS: Record<string, string> = {
  active: 'deploy',
  deploy: 'deploy',
  deleted: 'delete',
  undeploy: 'delete',
  manage: 'manage',
  provide: 'provide',
  inspect: 'inspect',
  abort: 'abort',
  clean: 'clean',
  adopt: 'adopt',
  rescue: 'rescue',
  unrescue: 'unrescue',
};

/** minimum API minor version per verb (ironic api utils MIN_VERB_VERSIONS) */
export const MIN_VERB_VERSIONS: Record<string, number> = {
  manage: 4,
  provide: 4,
  inspect: 6,
  abort: 13,
  clean: 15,
  adopt: 17,
  rescue: 38,
  unrescue: 38,
  deploy: 73,
  undeploy: 73,
};

export const UPDATE_ALLOWED_STATES: readonly string[] = [
  S.DEPLOYFAIL,
  S.INSPECTING,
  S.INSPECTFAIL,
  S.INSPECTWAIT,
  S.CLEANFAIL,
  S.ERROR,
  S.VERIFYING,
  S.ADOPTFAIL,
  S.RESCUEFAIL,
  S.UNRESCUEFAIL,
];
export const DELETE_ALLOWED_STATES: readonly string[] = [S.MANAGEABLE, S.ENROLL, S.ADOPTFAIL];
/** states in which the conductor lets interfaces / resource_class / instance_uuid change */
export const CONDUCTOR_UPDATE_ALLOWED: readonly string[] = [S.ENROLL, S.INSPECTING, S.INSPECTWAIT, S.MANAGEABLE, S.AVAILABLE];
export const STABLE_STATES: readonly string[] = [S.ENROLL, S.MANAGEABLE, S.AVAILABLE, S.ACTIVE, S.ERROR, S.RESCUE];
export const UNSTABLE_STATES: readonly string[] = [
  S.DEPLOYING,
  S.DEPLOYWAIT,
  S.CLEANING,
  S.CLEANWAIT,
  S.VERIFYING,
  S.DELETING,
  S.INSPECTING,
  S.INSPECTWAIT,
  S.ADOPTING,
  S.RESCUING,
  S.RESCUEWAIT,
  S.UNRESCUING,
];

/** Every state of the machine (a provision_state filter must be one of them). */
export const ALL_STATES: readonly string[] = Object.values(S);

/** target state of each transitional state (states.py add_state(..., target=...)) */
const TARGETS: Record<string, string> = {
  [S.VERIFYING]: S.MANAGEABLE,
  [S.DEPLOYING]: S.ACTIVE,
  [S.DEPLOYWAIT]: S.ACTIVE,
  [S.DEPLOYFAIL]: S.ACTIVE,
  [S.CLEANING]: S.AVAILABLE,
  [S.CLEANWAIT]: S.AVAILABLE,
  [S.CLEANFAIL]: S.AVAILABLE,
  [S.DELETING]: S.AVAILABLE,
  [S.INSPECTING]: S.MANAGEABLE,
  [S.INSPECTFAIL]: S.MANAGEABLE,
  [S.INSPECTWAIT]: S.MANAGEABLE,
  [S.ADOPTING]: S.ACTIVE,
  [S.ADOPTFAIL]: S.ACTIVE,
  [S.RESCUING]: S.RESCUE,
  [S.RESCUEWAIT]: S.RESCUE,
  [S.RESCUEFAIL]: S.RESCUE,
  [S.UNRESCUING]: S.ACTIVE,
  [S.UNRESCUEFAIL]: S.ACTIVE,
};

/** states.py add_transition(src, dst, event), in order */
const TRANSITIONS: Array<[string, string, string]> = [
  [S.AVAILABLE, S.DEPLOYING, 'deploy'],
  [S.DEPLOYING, S.DEPLOYFAIL, 'fail'],
  [S.DEPLOYFAIL, S.DEPLOYING, 'rebuild'],
  [S.DEPLOYFAIL, S.DEPLOYING, 'deploy'],
  [S.DEPLOYING, S.DEPLOYWAIT, 'wait'],
  [S.DEPLOYWAIT, S.DEPLOYING, 'resume'],
  [S.DEPLOYWAIT, S.DEPLOYFAIL, 'fail'],
  [S.DEPLOYING, S.ACTIVE, 'done'],
  [S.ACTIVE, S.DEPLOYING, 'rebuild'],
  [S.ACTIVE, S.DELETING, 'delete'],
  [S.DEPLOYWAIT, S.DELETING, 'delete'],
  [S.DEPLOYFAIL, S.DELETING, 'delete'],
  [S.DELETING, S.ERROR, 'fail'],
  [S.DELETING, S.CLEANING, 'clean'],
  [S.CLEANING, S.AVAILABLE, 'done'],
  [S.CLEANING, S.CLEANFAIL, 'fail'],
  [S.CLEANWAIT, S.CLEANFAIL, 'fail'],
  [S.CLEANWAIT, S.CLEANFAIL, 'abort'],
  [S.CLEANING, S.CLEANWAIT, 'wait'],
  [S.CLEANWAIT, S.CLEANING, 'resume'],
  [S.CLEANFAIL, S.MANAGEABLE, 'manage'],
  [S.MANAGEABLE, S.CLEANING, 'provide'],
  [S.MANAGEABLE, S.CLEANING, 'clean'],
  [S.CLEANING, S.MANAGEABLE, 'manage'],
  [S.AVAILABLE, S.MANAGEABLE, 'manage'],
  [S.ERROR, S.DEPLOYING, 'rebuild'],
  [S.ERROR, S.DELETING, 'delete'],
  [S.MANAGEABLE, S.INSPECTING, 'inspect'],
  [S.INSPECTING, S.MANAGEABLE, 'done'],
  [S.INSPECTING, S.INSPECTFAIL, 'fail'],
  [S.INSPECTING, S.INSPECTWAIT, 'wait'],
  [S.INSPECTWAIT, S.MANAGEABLE, 'done'],
  [S.INSPECTWAIT, S.INSPECTFAIL, 'fail'],
  [S.INSPECTWAIT, S.INSPECTFAIL, 'abort'],
  [S.INSPECTFAIL, S.MANAGEABLE, 'manage'],
  [S.INSPECTFAIL, S.INSPECTING, 'inspect'],
  [S.ACTIVE, S.RESCUING, 'rescue'],
  [S.RESCUING, S.RESCUE, 'done'],
  [S.RESCUING, S.RESCUEWAIT, 'wait'],
  [S.RESCUEWAIT, S.RESCUING, 'resume'],
  [S.RESCUE, S.RESCUING, 'rescue'],
  [S.RESCUE, S.DELETING, 'delete'],
  [S.RESCUEWAIT, S.RESCUEFAIL, 'fail'],
  [S.RESCUING, S.RESCUEFAIL, 'fail'],
  [S.RESCUEWAIT, S.RESCUEFAIL, 'abort'],
  [S.RESCUEFAIL, S.RESCUING, 'rescue'],
  [S.RESCUEFAIL, S.UNRESCUING, 'unrescue'],
  [S.RESCUEFAIL, S.DELETING, 'delete'],
  [S.RESCUEWAIT, S.DELETING, 'delete'],
  [S.RESCUE, S.UNRESCUING, 'unrescue'],
  [S.UNRESCUING, S.ACTIVE, 'done'],
  [S.UNRESCUING, S.UNRESCUEFAIL, 'fail'],
  [S.UNRESCUEFAIL, S.RESCUING, 'rescue'],
  [S.UNRESCUEFAIL, S.UNRESCUING, 'unrescue'],
  [S.UNRESCUEFAIL, S.DELETING, 'delete'],
  [S.ENROLL, S.VERIFYING, 'manage'],
  [S.VERIFYING, S.MANAGEABLE, 'done'],
  [S.VERIFYING, S.ENROLL, 'fail'],
  [S.MANAGEABLE, S.ADOPTING, 'adopt'],
  [S.ADOPTING, S.ACTIVE, 'done'],
  [S.ADOPTING, S.ADOPTFAIL, 'fail'],
  [S.ADOPTFAIL, S.ADOPTING, 'adopt'],
  [S.ADOPTFAIL, S.MANAGEABLE, 'manage'],
];

const NEXT = new Map<string, string>(TRANSITIONS.map(([src, dst, ev]) => [`${src}|${ev}`, dst]));

/** fsm.is_actionable_event: can `event` happen in `state`? */
export function isActionable(state: string, event: string): boolean {
  return NEXT.has(`${state}|${event}`);
}

/**
 * fsm.process_event: the state after `event` and the target provision state Ironic
 * records: a target reached is cleared, a transitional state sets its own target, an
 * explicit target (manual cleaning returns to manageable) wins.
 */
export function processEvent(
  state: string,
  event: string,
  currentTarget: string | null,
  explicitTarget?: string,
): { state: string; target: string | null } {
  const next = NEXT.get(`${state}|${event}`);
  if (next === undefined) throw new Error(`event ${event} is not allowed in state ${state}`);
  let target = currentTarget;
  if (target !== null && target === next) target = null;
  if (TARGETS[next] !== undefined) target = TARGETS[next]!;
  if (explicitTarget) target = explicitTarget;
  return { state: next, target };
}

/**
 * The work the conductor does after the API accepted a verb, as a list of events
 * applied in order once the driver step before each of them succeeded (fake hardware
 * always succeeds). `driver` names the driver call made before the event.
 */
export interface ProgramStep {
  driver?: 'verify' | 'clean' | 'deploy' | 'tearDown' | 'inspect' | 'adopt' | 'rescue' | 'unrescue';
  event: string;
  /** clear the instance fields and release the allocation in the same write */
  releaseInstance?: boolean;
}

/** The steps after the first event, for a verb started in `fromState`. */
export function provisionProgram(verb: string, fromState: string): ProgramStep[] {
  const event = VERBS[verb] ?? verb;
  switch (event) {
    case 'manage':
      return fromState === S.ENROLL ? [{ driver: 'verify', event: 'done' }] : [];
    case 'provide':
      return [{ driver: 'clean', event: 'done' }];
    case 'clean':
      return [{ driver: 'clean', event: 'manage' }];
    case 'deploy':
    case 'rebuild':
      return [{ driver: 'deploy', event: 'done' }];
    case 'delete':
      return [
        { driver: 'tearDown', event: 'clean', releaseInstance: true },
        { driver: 'clean', event: 'done' },
      ];
    case 'inspect':
      return [{ driver: 'inspect', event: 'done' }];
    case 'adopt':
      return [{ driver: 'adopt', event: 'done' }];
    case 'rescue':
      return [{ driver: 'rescue', event: 'done' }];
    case 'unrescue':
      return [{ driver: 'unrescue', event: 'done' }];
    default:
      return [];
  }
}

// ------------------------------------------------------------------ power

export const POWER = {
  ON: 'power on',
  OFF: 'power off',
  REBOOT: 'rebooting',
  SOFT_REBOOT: 'soft rebooting',
  SOFT_POWER_OFF: 'soft power off',
} as const;
export const ALLOWED_TARGET_POWER_STATES: readonly string[] = Object.values(POWER);

/** The power state a node ends in after a power action. */
export function powerResult(target: string): string {
  return target === POWER.OFF || target === POWER.SOFT_POWER_OFF ? POWER.OFF : POWER.ON;
}

// ------------------------------------------------------------------ names

const LOGICAL_NAME = /^[A-Z0-9\-._~]+\n?$/i;
const HOSTNAME_SAFE = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9\-_]{0,62}[a-z0-9])*\.?\n?$/;

/** ironic.common.utils.is_valid_logical_name (RFC 3986 unreserved characters, <= 255) */
export function isValidLogicalName(name: unknown): boolean {
  return typeof name === 'string' && [...name].length <= 255 && LOGICAL_NAME.test(name);
}

/** ironic.common.utils.is_hostname_safe (names before API 1.10) */
export function isHostnameSafe(name: unknown): boolean {
  return typeof name === 'string' && [...name].length <= 255 && HOSTNAME_SAFE.test(name);
}

// ------------------------------------------------------------------ allocations

export const ALLOCATION_STATES = { ALLOCATING: 'allocating', ACTIVE: 'active', ERROR: 'error' } as const;

/** What the candidate search needs to know about a node. */
export interface CandidateNode {
  uuid: string;
  name?: string | null;
  resource_class?: string | null;
  provision_state: string;
  maintenance: boolean;
  power_state?: string | null;
  instance_uuid?: string | null;
  owner?: string | null;
  lessee?: string | null;
  traits: string[];
}

export interface AllocationRequest {
  uuid: string;
  name?: string | null;
  resource_class: string;
  traits: string[];
  candidate_nodes: string[];
  owner?: string | null;
}

/** The database filter of _candidate_nodes (everything but traits). */
export function matchesBaseFilter(n: CandidateNode, a: AllocationRequest): boolean {
  if (n.resource_class !== a.resource_class) return false;
  if (n.provision_state !== S.AVAILABLE || n.maintenance) return false;
  if (n.power_state === undefined || n.power_state === null) return false;
  if (n.instance_uuid) return false;
  if (a.candidate_nodes.length && !a.candidate_nodes.includes(n.uuid)) return false;
  if (a.owner && n.owner !== a.owner && n.lessee !== a.owner) return false;
  return true;
}

export function traitsMatch(nodeTraits: readonly string[], wanted: readonly string[]): boolean {
  const have = new Set(nodeTraits);
  return wanted.every((t) => have.has(t));
}

/** _verify_node: does the node (re-read) still satisfy the request? */
export function stillSuitable(n: CandidateNode, a: AllocationRequest): boolean {
  return (
    !n.maintenance &&
    !n.instance_uuid &&
    n.provision_state === S.AVAILABLE &&
    n.resource_class === a.resource_class &&
    traitsMatch(n.traits, a.traits) &&
    n.power_state !== undefined &&
    n.power_state !== null &&
    (!a.owner || n.owner === a.owner || n.lessee === a.owner)
  );
}

export class AllocationFailed extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

function uniq(xs: readonly string[]): string[] {
  return [...new Set(xs)];
}

/**
 * _candidate_nodes: filter, shuffle (so parallel allocations do not try nodes in the
 * same order) and move a node named like the allocation to the front (API 1.79).
 * Throws AllocationFailed with Ironic's texts when nothing is left.
 */
export function chooseCandidates<T extends CandidateNode>(nodes: readonly T[], a: AllocationRequest, random: () => number = Math.random): T[] {
  let list = nodes.filter((n) => matchesBaseFilter(n, a));
  if (!list.length) {
    throw new AllocationFailed(
      a.candidate_nodes.length
        ? `none of the requested nodes are available and match the resource class ${a.resource_class}`
        : `no available nodes match the resource class ${a.resource_class}`,
    );
  }
  if (a.traits.length) {
    list = list.filter((n) => traitsMatch(n.traits, a.traits));
    if (!list.length) throw new AllocationFailed(`no suitable nodes have the requested traits ${uniq(a.traits).join(', ')}`);
  }
  list = shuffle(list, random);
  if (a.name) {
    const i = list.findIndex((n) => n.name === a.name);
    if (i > 0) list.unshift(...list.splice(i, 1));
  }
  return list;
}

/** Fisher-Yates (random.shuffle) */
export function shuffle<T>(xs: readonly T[], random: () => number = Math.random): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** AllocationFailed's text: the allocation's last_error. */
export function allocationFailedText(uuid: string, reason: string): string {
  return `Failed to process allocation ${uuid}: ${reason}.`;
}

/** do_allocate's text for anything else that went wrong. */
export function unexpectedFailureText(detail: string): string {
  return `Unexpected exception during allocation: ${detail}`;
}

/** Why a backfill does not fit its node (_do_backfill_allocation); empty when it does. */
export function backfillProblems(
  n: CandidateNode,
  a: { resource_class?: string | null; traits: string[]; candidate_nodes: string[] },
): string[] {
  const errors: string[] = [];
  if (n.provision_state !== S.ACTIVE) {
    errors.push(`Node must be in the "active" state, but the current state is "${n.provision_state}"`);
  }
  if (a.resource_class && n.resource_class !== a.resource_class) {
    errors.push(`Resource class ${n.resource_class ?? 'None'} does not match the requested resource class ${a.resource_class}`);
  }
  if (a.traits.length && !traitsMatch(n.traits, a.traits)) {
    errors.push(`List of traits ${pyList(n.traits)} does not match the requested traits ${pyList(a.traits)}`);
  }
  if (a.candidate_nodes.length && !a.candidate_nodes.includes(n.uuid)) {
    errors.push(`Candidate nodes must be empty or contain the target node, but got ${pyList(a.candidate_nodes)}`);
  }
  return errors;
}

function pyList(xs: readonly string[]): string {
  return `[${xs.map((x) => `'${x}'`).join(', ')}]`;
}

// ------------------------------------------------------------------ records

export const INTERFACES = [
  'bios',
  'boot',
  'console',
  'deploy',
  'inspect',
  'management',
  'network',
  'power',
  'raid',
  'rescue',
  'storage',
  'vendor',
] as const;

/** A node as the API sees it (Ironic's field names); null = unset. */
export interface NodeRecord {
  uuid: string;
  name: string | null;
  driver: string;
  driver_info: Record<string, unknown>;
  driver_internal_info: Record<string, unknown>;
  properties: Record<string, unknown>;
  extra: Record<string, unknown>;
  instance_info: Record<string, unknown>;
  instance_uuid: string | null;
  allocation_uuid: string | null;
  resource_class: string | null;
  provision_state: string;
  target_provision_state: string | null;
  provision_updated_at: string | null;
  power_state: string | null;
  target_power_state: string | null;
  maintenance: boolean;
  maintenance_reason: string | null;
  fault: string | null;
  last_error: string | null;
  owner: string | null;
  lessee: string | null;
  description: string | null;
  conductor_group: string;
  protected: boolean;
  protected_reason: string | null;
  retired: boolean;
  retired_reason: string | null;
  automated_clean: boolean | null;
  console_enabled: boolean;
  network_data: Record<string, unknown>;
  boot_mode: string | null;
  secure_boot: boolean | null;
  clean_step: Record<string, unknown>;
  deploy_step: Record<string, unknown>;
  raid_config: Record<string, unknown>;
  target_raid_config: Record<string, unknown>;
  inspection_started_at: string | null;
  inspection_finished_at: string | null;
  traits: string[];
  bios_interface: string | null;
  boot_interface: string | null;
  console_interface: string | null;
  deploy_interface: string | null;
  inspect_interface: string | null;
  management_interface: string | null;
  network_interface: string | null;
  power_interface: string | null;
  raid_interface: string | null;
  rescue_interface: string | null;
  storage_interface: string | null;
  vendor_interface: string | null;
  created_at: string;
  updated_at: string | null;
  /** the execution holding the node's lock while a provision/power action runs (Ironic's reservation) */
  lock: string | null;
  /** what that execution is doing, so a dead one can be resumed (cleared with the lock) */
  lock_action: NodeLockAction | null;
  /** optimistic-concurrency version, bumped by every write */
  ver: number;
  /** creation order (Ironic lists by internal id) */
  seq: number;
}

export interface NodeLockAction {
  action: 'power' | 'provision';
  /** the power target, or the provision verb */
  target: string;
  /** the provision state the action started from */
  from: string;
  /** when the lock was taken (ms epoch) */
  at: number;
}

/** Fields that hold a dict (empty dict when unset). */
export const NODE_DICT_FIELDS = [
  'driver_info',
  'driver_internal_info',
  'properties',
  'extra',
  'instance_info',
  'network_data',
  'clean_step',
  'deploy_step',
  'raid_config',
  'target_raid_config',
] as const;

export interface AllocationRecord {
  uuid: string;
  name: string | null;
  resource_class: string;
  traits: string[];
  candidate_nodes: string[];
  extra: Record<string, unknown>;
  owner: string | null;
  state: string;
  last_error: string | null;
  node_uuid: string | null;
  created_at: string;
  updated_at: string | null;
  /** the execution processing the allocation (Ironic's conductor_affinity) */
  exec: string | null;
  /** when `exec` was assigned (ms epoch) */
  exec_at: number;
  seq: number;
}

/** Python's datetime.isoformat() of an aware UTC time: 2026-11-22T07:41:52.877259+00:00 */
export function isoNow(d: Date = new Date()): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, (_m, ms: string) => `.${ms}000+00:00`);
}

/** Is the node one an allocation could take right now (ignoring class, traits, owner)? */
export function isAllocatable(n: Pick<NodeRecord, 'provision_state' | 'maintenance' | 'power_state' | 'instance_uuid'>): boolean {
  return n.provision_state === S.AVAILABLE && !n.maintenance && n.power_state !== null && !n.instance_uuid;
}
