/**
 * ResourceProvider.get_by_uuid as the Placement handlers use it: a missing provider is
 * a 404 reading "No resource provider with uuid <uuid> found". Handlers that let the
 * object layer's NotFound escape get Placement's escaped 404 (no vary header); those
 * that catch it and re-raise (`wrap`) get their own wording inside the handler.
 */
import type { ProviderRecord } from '../core/placement/model.js';
import { getProvider } from '../store/placement/providers.js';
import { notFound } from '../core/placement/errors.js';

export function providerNotFoundMessage(uuid: string): string {
  return `No resource provider with uuid ${uuid} found`;
}

export async function providerOr404(uuid: string, wrap?: (message: string) => string): Promise<ProviderRecord> {
  const p = await getProvider(uuid);
  if (p) return p;
  throw providerNotFound(uuid, wrap);
}

export function providerNotFound(uuid: string, wrap?: (message: string) => string) {
  const msg = providerNotFoundMessage(uuid);
  const e = notFound(wrap ? wrap(msg) : msg);
  e.escaped = !wrap;
  return e;
}
