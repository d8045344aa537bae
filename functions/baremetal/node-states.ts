/**
 * /v1/nodes/{node}/states, .../states/power, .../states/provision, .../states/raid and
 * .../maintenance (NodeStatesController, NodeMaintenanceController): argument checks
 * here, the work in the conductor (functions/conductor/nodes.ts). Power and
 * provisioning answer 202 and finish asynchronously (functions/conductor/node-actions.ts).
 */
import { httpLambda } from '../http/apigw.js';
import { Err } from '../core/baremetal/errors.js';
import { ALLOWED_TARGET_POWER_STATES, MIN_VERB_VERSIONS, POWER, S } from '../core/baremetal/states.js';
import { setMaintenance, setPowerState, setProvisionState, setTargetRaidConfig } from '../conductor/nodes.js';
import { raidConfigProblem } from './raid-config.js';
import { accepted, baremetalApp, buildUrl, jsonResponse, noContent, queryArgs, type BmRequest, type FamilyRoutes } from './framework/app.js';
import { booleanArg, integerArg, pyStr, stringArg } from './framework/args.js';
import { V } from './framework/versions.js';
import { nodeIdent, nodeWithPolicy } from './lookup.js';
import { nodeStatesView } from './views.js';

/** JSON body keys as keyword arguments (args.validate's unexpected / missing checks) */
function bodyArgs(r: BmRequest, allowed: string[], required: string[] = []): Record<string, unknown> {
  const body = r.body();
  const args: Record<string, unknown> = body && typeof body === 'object' && !Array.isArray(body) ? { ...(body as object) } : {};
  for (const [k, v] of Object.entries(r.query.toDict())) if (!(k in args)) args[k] = v;
  const extra = Object.keys(args).filter((k) => !allowed.includes(k));
  if (extra.length) throw Err.invalid(`Unexpected arguments: ${extra.join(', ')}`);
  for (const k of required) if (!(k in args)) throw Err.invalid(`Missing mandatory parameter: ${k}`);
  return args;
}

function typesArg(name: string, v: unknown, kinds: Array<'null' | 'dict' | 'str' | 'list'>): void {
  const ok = kinds.some((k) =>
    k === 'null'
      ? v === null || v === undefined
      : k === 'dict'
        ? v !== null && typeof v === 'object' && !Array.isArray(v)
        : k === 'list'
          ? Array.isArray(v)
          : typeof v === 'string',
  );
  if (!ok) {
    const names = kinds.map((k) => `<class '${k === 'null' ? 'NoneType' : k}'>`).join(', ');
    throw Err.invalid(`Expected types ${names} for ${name}: ${pyStr(v)}`);
  }
}

function statesLocation(r: BmRequest, ident: string): void {
  r.headers.location = buildUrl(r, 'nodes', `${ident}/states`);
}

async function getStates(r: BmRequest) {
  const ident = nodeIdent(r);
  queryArgs(r, []);
  const node = await nodeWithPolicy(r, 'baremetal:node:get_states', ident);
  return jsonResponse(200, nodeStatesView(r, node));
}

// ------------------------------------------------------------------ power

async function power(r: BmRequest) {
  const ident = nodeIdent(r);
  const args = bodyArgs(r, ['target', 'timeout'], ['target']);
  const target = stringArg('target', args.target)!;
  const timeout = integerArg('timeout', args.timeout);
  await setPowerState(
    () => nodeWithPolicy(r, 'baremetal:node:set_power_state', ident),
    target,
    (node) => {
      if (([POWER.SOFT_REBOOT, POWER.SOFT_POWER_OFF] as string[]).includes(target) || timeout) {
        if (r.minor < V.SOFT_POWER_OFF) throw Err.notAcceptable();
      }
      if (timeout !== undefined && timeout < 1) throw Err.invalid('timeout has to be positive integer');
      if (!ALLOWED_TARGET_POWER_STATES.includes(target)) throw Err.invalidStateRequested(target, ident, node.power_state);
      if (node.provision_state === S.CLEANWAIT || node.provision_state === S.CLEANING) {
        throw Err.invalidStateRequested(target, ident, node.provision_state);
      }
    },
  );
  statesLocation(r, ident);
  return accepted();
}

// ------------------------------------------------------------------ provision

async function provision(r: BmRequest) {
  const ident = nodeIdent(r);
  const args = bodyArgs(r, ['target', 'configdrive', 'clean_steps', 'deploy_steps', 'rescue_password', 'disable_ramdisk'], ['target']);
  const target = stringArg('target', args.target)!;
  typesArg('configdrive', args.configdrive, ['null', 'dict', 'str']);
  typesArg('clean_steps', args.clean_steps, ['null', 'list']);
  typesArg('deploy_steps', args.deploy_steps, ['null', 'list']);
  const rescuePassword = stringArg('rescue_password', args.rescue_password);
  const disableRamdisk = booleanArg('disable_ramdisk', args.disable_ramdisk);
  const configdrive = args.configdrive ?? null;
  const cleanSteps = (args.clean_steps as unknown[] | null | undefined) ?? null;
  const deploySteps = (args.deploy_steps as unknown[] | null | undefined) ?? null;

  await setProvisionState(() => nodeWithPolicy(r, 'baremetal:node:set_provision_state', ident), {
    target,
    configdrive,
    before: () => {
      const minVersion = MIN_VERB_VERSIONS[target];
      if (minVersion !== undefined && r.minor < minVersion) throw Err.notAcceptable();
    },
    validate: () => {
      if (configdrive) {
        const allowed = [S.ACTIVE, ...(r.minor >= 35 ? ['rebuild'] : [])];
        if (!allowed.includes(target)) {
          throw Err.invalid(`Adding a config drive is only supported when setting provision state to ${allowed.join(', ')}`);
        }
        if (typeof configdrive === 'object' && r.minor < 56) {
          throw Err.invalid('Providing a JSON object for configdrive is only supported starting with API version 1.56');
        }
      }
      if (disableRamdisk !== undefined) {
        if (r.minor < 70) throw Err.notAcceptable('disable_ramdisk is not acceptable in this API version');
        if (target !== 'clean') throw Err.invalid('disable_ramdisk is supported only with manual cleaning');
      }
      if (cleanSteps && target !== 'clean') throw Err.invalid('"clean_steps" is only valid when setting target provision state to clean');
      if (deploySteps?.length) {
        if (r.minor < 69) throw Err.notAcceptable('Request not acceptable. The minimal required API version should be 1.69');
        if (target !== S.ACTIVE && target !== 'rebuild') {
          throw Err.invalid('"deploy_steps" is only valid when setting target provision state to active or rebuild');
        }
      }
      if (rescuePassword !== undefined && target !== 'rescue') {
        throw Err.invalid('"rescue_password" is only valid when setting target provision state to rescue');
      }
      if (target === 'clean' && !cleanSteps?.length) throw Err.invalid('"clean_steps" is required when setting target provision state to clean');
      if (target === 'rescue' && !rescuePassword?.trim()) {
        throw Err.invalid('A non-empty "rescue_password" is required when setting target provision state to rescue');
      }
    },
  });
  statesLocation(r, ident);
  return accepted();
}

// ------------------------------------------------------------------ RAID

/** PUT .../states/raid: the body is the target RAID configuration ({} clears it) */
async function raid(r: BmRequest) {
  const ident = nodeIdent(r);
  queryArgs(r, []);
  const target = r.body();
  typesArg('target_raid_config', target, ['dict']);
  await setTargetRaidConfig(
    async () => {
      const node = await nodeWithPolicy(r, 'baremetal:node:set_raid_state', ident);
      if (r.minor < V.RAID_CONFIG) throw Err.notAcceptable();
      return node;
    },
    target as Record<string, unknown>,
    (config) => {
      const problem = raidConfigProblem(config);
      if (problem) throw Err.invalid(problem);
    },
  );
  return noContent();
}

// ------------------------------------------------------------------ maintenance

async function maintenance(r: BmRequest, on: boolean) {
  const ident = nodeIdent(r);
  const args = bodyArgs(r, on ? ['reason'] : []);
  const reason = on ? stringArg('reason', args.reason) : undefined;
  await setMaintenance(() => nodeWithPolicy(r, on ? 'baremetal:node:set_maintenance' : 'baremetal:node:clear_maintenance', ident), on, reason);
  return accepted();
}

export const routes: FamilyRoutes = {
  '/v1/nodes/{node}/states': { GET: getStates },
  '/v1/nodes/{node}/states/power': { PUT: power },
  '/v1/nodes/{node}/states/provision': { PUT: provision },
  '/v1/nodes/{node}/states/raid': { PUT: raid },
  '/v1/nodes/{node}/maintenance': { PUT: (r) => maintenance(r, true), DELETE: (r) => maintenance(r, false) },
};
export const handler = httpLambda(baremetalApp(routes), 'baremetal-node-states');
