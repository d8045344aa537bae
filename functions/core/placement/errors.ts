/**
 * Placement's exceptions as its domain raises them (placement/errors.py's codes): a
 * status, WebOb's detail text and an error code. The API framework renders them
 * (functions/placement/framework/errors.ts), as bare metal's renders IronicError
 * (core/baremetal/errors.ts): both APIs' error classes live here, in the core.
 */
import { Problem } from '../errors.js';

export const ErrorCodes = {
  DEFAULT: 'placement.undefined_code',
  INVENTORY_INUSE: 'placement.inventory.inuse',
  CONCURRENT_UPDATE: 'placement.concurrent_update',
  DUPLICATE_NAME: 'placement.duplicate_name',
  PROVIDER_IN_USE: 'placement.resource_provider.inuse',
  PROVIDER_CANNOT_DELETE_PARENT: 'placement.resource_provider.cannot_delete_parent',
  RESOURCE_PROVIDER_NOT_FOUND: 'placement.resource_provider.not_found',
  ILLEGAL_DUPLICATE_QUERYPARAM: 'placement.query.duplicate_key',
  QUERYPARAM_BAD_VALUE: 'placement.query.bad_value',
  QUERYPARAM_MISSING_VALUE: 'placement.query.missing_value',
} as const;

/** A Placement HTTP exception: a Problem that always has an error code. */
export class PlacementError extends Problem {
  /** raised outside WebOb's wsgify (routing 404, policy 403): no `vary` header */
  escaped = false;
  declare readonly code: string;
  constructor(status: number, detail = '', code: string = ErrorCodes.DEFAULT, headers: Record<string, string> = {}) {
    super(status, detail, code, headers);
  }
}

export const badRequest = (detail: string, code?: string) => new PlacementError(400, detail, code);
export const notFound = (detail = '', code?: string) => new PlacementError(404, detail, code);
export const conflict = (detail: string, code?: string) => new PlacementError(409, detail, code);
export const forbidden = (detail: string) => new PlacementError(403, detail);
