/**
 * The node handlers' checks of what a request says (functions/baremetal/nodes.ts): names,
 * the booleans and UUIDs of a node document, fields the request's version does not know,
 * and what a patch needs — the policy rules it touches and the dict it applies to.
 */
import { Err } from '../../core/baremetal/errors.js';
import { INTERFACES, type NodeRecord } from '../../core/baremetal/records.js';
import { isUuidLike } from '../../core/compat/uuid.js';
import { config } from '../../config.js';
import type { BmRequest } from '../framework/app.js';
import { booleanArg, uuidArg, validateSchema } from '../framework/args.js';
import type { PatchOp } from '../framework/jsonpatch.js';
import { V, disallowedFields } from '../framework/versions.js';
import { validLogicalName } from '../lookup.js';

const RESERVED_NAMES = ['maintenance', 'management', 'states', 'vendor_passthru', 'detail', 'validate'];
/** NodesController._check_names_acceptable */
export function checkNames(r: BmRequest, names: unknown[], msg: (name: string) => string): void {
  if (r.minor < V.NODE_NAME) throw Err.notAcceptable();
  for (const name of names) {
    if (!validLogicalName(r, name) || isUuidLike(name)) throw Err.invalid(msg(String(name)));
    if (RESERVED_NAMES.includes(name as string)) {
      throw Err.invalid(`The word "${name}" is reserved and can not be used as a node name. Reserved words are: ${RESERVED_NAMES.join(', ')}.`);
    }
  }
}

const BOOL_FIELDS = ['automated_clean', 'console_enabled', 'protected', 'maintenance', 'retired', 'secure_boot'];
const UUID_FIELDS = ['chassis_uuid', 'instance_uuid', 'uuid'];

/** NODE_VALIDATE_EXTRA: booleans from strings, UUID checks */
export function validateNodeDict(name: string, d: Record<string, unknown>, schema: object): void {
  validateSchema(name, d, schema as never);
  for (const f of BOOL_FIELDS) if (f in d && f !== 'secure_boot') d[f] = booleanArg(f, d[f]) ?? null;
  for (const f of UUID_FIELDS) if (f in d) d[f] = uuidArg(f, d[f]) ?? null;
}

/** fields the request's version does not know are refused (406) */
export function checkAllowedFields(r: BmRequest, fields: string[] | undefined): void {
  if (!fields) return;
  const disallowed = disallowedFields(r.minor);
  if (fields.some((f) => disallowed.includes(f))) throw Err.notAcceptable();
}

// ------------------------------------------------------------------ patches

const INTERFACE_FIELDS = INTERFACES.map((i) => `${i}_interface`);

/** the policy rules a patch needs (NodesController._authorize_patch_and_get_node) */
export function patchRules(patch: PatchOp[]): string[] {
  const rules: string[] = [];
  let generic = false;
  for (const p of patch) {
    const path = p.path;
    if (path.startsWith('/instance_info')) rules.push('baremetal:node:update_instance_info');
    else if (path.startsWith('/extra')) rules.push('baremetal:node:update_extra');
    else if (path.startsWith('/automated_clean') && safeBool(p.value) === false) rules.push('baremetal:node:disable_cleaning');
    else if (path.startsWith('/driver_info')) rules.push('baremetal:node:update:driver_info');
    else if (path.startsWith('/properties')) rules.push('baremetal:node:update:properties');
    else if (path.startsWith('/chassis_uuid')) rules.push('baremetal:node:update:chassis_uuid');
    else if (path.startsWith('/instance_uuid')) rules.push('baremetal:node:update:instance_uuid');
    else if (path.startsWith('/lessee')) rules.push('baremetal:node:update:lessee');
    else if (path.startsWith('/owner')) rules.push('baremetal:node:update:owner');
    else if (path.startsWith('/driver')) rules.push('baremetal:node:update:driver_interfaces');
    else if (INTERFACE_FIELDS.includes(path.slice(1))) rules.push('baremetal:node:update:driver_interfaces');
    else if (path.startsWith('/network_data')) rules.push('baremetal:node:update:network_data');
    else if (path.startsWith('/conductor_group')) rules.push('baremetal:node:update:conductor_group');
    else if (path.startsWith('/name')) rules.push('baremetal:node:update:name');
    else if (path.startsWith('/retired')) rules.push('baremetal:node:update:retired');
    else if (path.startsWith('/shard')) rules.push('baremetal:node:update:shard');
    else generic = true;
  }
  if (generic || !rules.length) rules.push('baremetal:node:update');
  return rules;
}

function safeBool(v: unknown): boolean | undefined {
  try {
    return booleanArg('value', v);
  } catch {
    return undefined;
  }
}

/** node.as_dict() + chassis_uuid: what a patch is applied to */
export function patchableDict(n: NodeRecord): Record<string, unknown> {
  const d: Record<string, unknown> = { ...n, chassis_uuid: null, shard: null };
  delete d.lock;
  delete d.ver;
  delete d.seq;
  d.id = n.seq;
  d.reservation = n.lock ? config().baremetal.conductorName : null;
  return d;
}
