/**
 * Ironic's exceptions (ironic/common/exception.py) as the bare-metal domain raises
 * them: a status and Ironic's text. The API framework renders them as fault bodies
 * (functions/baremetal/framework/errors.ts); the conductor and the handlers throw them.
 */
import { Problem } from '../errors.js';

/** An error raised by an API method (exception.IronicException / ClientSideError): a Problem whose detail is the faultstring. */
export class IronicError extends Problem {
  constructor(
    status: number,
    faultstring: string,
    readonly faultcode: 'Client' | 'Server' = faultcodeOf(status),
    headers: Record<string, string> = {},
  ) {
    super(status, faultstring, undefined, headers);
  }

  get faultstring(): string {
    return this.detail;
  }
}

/** WSME's fault code: the server's fault for a 5xx, the client's otherwise */
export function faultcodeOf(status: number): 'Client' | 'Server' {
  return status >= 500 ? 'Server' : 'Client';
}

/** UnsupportedDriverExtension's text (also a validation result's reason) */
export function unsupportedExtensionText(driver: string, extension: string): string {
  return `Driver ${driver} does not support ${extension} (disabled or not implemented).`;
}

// ---- Ironic's exception classes, as constructors of IronicError ----

export const Err = {
  invalid: (msg = 'Unacceptable parameters.') => new IronicError(400, msg),
  notAcceptable: (msg = 'Request not acceptable.') => new IronicError(406, msg),
  notFound: (msg = 'Resource could not be found.') => new IronicError(404, msg),
  conflict: (msg = 'Conflict.') => new IronicError(409, msg),
  forbidden: (resource: string) => new IronicError(403, `Access was denied to the following resource: ${resource}`),
  notAuthorized: (msg = 'Not authorized.') => new IronicError(403, msg),
  nodeNotFound: (node: string) => new IronicError(404, `Node ${node} could not be found.`),
  allocationNotFound: (a: string) => new IronicError(404, `Allocation ${a} could not be found.`),
  invalidUuidOrName: (name: string) => new IronicError(400, `Expected a logical name or UUID but received ${name}.`),
  nodeAssociated: (node: string, instance: string) => new IronicError(409, `Node ${node} is associated with instance ${instance}.`),
  instanceAssociated: (instance: string, node: string | null | undefined) =>
    new IronicError(409, `Instance ${instance} is already associated with a node, it cannot be associated with this other node ${node ?? 'None'}`),
  nodeLocked: (node: string, host: string) =>
    new IronicError(409, `Node ${node} is locked by host ${host}, please retry after the current operation is completed.`),
  invalidStateRequested: (action: string, node: string, state: string | null) =>
    new IronicError(400, `The requested action "${action}" can not be performed on node "${node}" while it is in state "${state ?? 'None'}".`),
  nodeInMaintenance: (op: string, node: string) =>
    new IronicError(400, `The ${op} operation can't be performed on node ${node} because it's in maintenance mode.`),
  duplicateNodeName: (name: string) => new IronicError(409, `A node with name ${name} already exists.`),
  nodeAlreadyExists: (uuid: string) => new IronicError(409, `A node with UUID ${uuid} already exists.`),
  duplicateAllocationName: (name: string) => new IronicError(409, `An allocation with name ${name} already exists.`),
  allocationAlreadyExists: (uuid: string) => new IronicError(409, `An allocation with UUID ${uuid} already exists.`),
  nodeTraitNotFound: (node: string, trait: string) => new IronicError(404, `Node ${node} doesn't have a trait '${trait}'`),
  nodeProtected: (node: string) => new IronicError(403, `Node ${node} is protected and cannot be undeployed, rebuilt or deleted`),
  driverNotFound: (name: string) => new IronicError(404, `Could not find the following driver(s) or hardware type(s): ${name}.`),
  driverUnknown: (name: string) => new IronicError(404, `The driver '${name}' is unknown.`),
  /** UnsupportedDriverExtension (the API answers it 404 where the interface is optional, as for RAID) */
  unsupportedDriverExtension: (driver: string, extension: string, status = 400) =>
    new IronicError(status, unsupportedExtensionText(driver, extension)),
  vifAlreadyAttached: (vif: string, node: string) =>
    new IronicError(409, `Unable to attach VIF because VIF ${vif} is already attached to Ironic Node ${node}`),
  vifNotAttached: (vif: string, node: string) =>
    new IronicError(400, `Unable to detach VIF ${vif} from node ${node} because it is not attached to it.`),
  noFreePhysicalPorts: (vif: string) => new IronicError(400, `Unable to attach VIF ${vif}, not enough free physical ports.`),
  /** retries exhausted on a busy item: the client may simply retry */
  busy: (what: string) => new IronicError(409, `${what} is being changed by another request at the same time, please retry.`),
};
