/**
 * Ironic's node states and provision state machine (ironic/common/states.py), and the
 * power states. Pure.
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

/** The first event that takes a node from state `from` to state `to` (the change feed names it, as Ironic's notifications do), or null. */
export function eventBetween(from: string, to: string): string | null {
  return TRANSITIONS.find(([src, dst]) => src === from && dst === to)?.[2] ?? null;
}

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
