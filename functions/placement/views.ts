/** Representations shared by several Placement handlers. */
import type { ProviderRecord } from '../core/placement/model.js';
import type { PlacementRequest } from './framework/request.js';

export function providerUrl(uuid: string): string {
  return `/resource_providers/${uuid}`;
}

/** resource_provider._serialize_links */
export function providerLinks(r: PlacementRequest, uuid: string) {
  const url = providerUrl(uuid);
  const rels = ['inventories', 'usages'];
  if (r.version.atLeast(1, 1)) rels.push('aggregates');
  if (r.version.atLeast(1, 6)) rels.push('traits');
  if (r.version.atLeast(1, 11)) rels.push('allocations');
  return [{ rel: 'self', href: url }, ...rels.map((rel) => ({ rel, href: `${url}/${rel}` }))];
}

/** resource_provider._serialize_provider */
export function providerView(r: PlacementRequest, p: ProviderRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {
    uuid: p.uuid,
    name: p.name,
    generation: p.generation,
    links: providerLinks(r, p.uuid),
  };
  if (r.version.atLeast(1, 14)) {
    out.parent_provider_uuid = p.parent ?? null;
    out.root_provider_uuid = p.root;
  }
  return out;
}

/** the newest of created/updated over a set of records (util.pick_last_modified) */
export function lastModified(records: Array<{ updatedAt?: string; createdAt?: string }>): Date | undefined {
  let best: number | undefined;
  for (const rec of records) {
    const t = Date.parse(rec.updatedAt ?? rec.createdAt ?? '');
    if (!Number.isNaN(t) && (best === undefined || t > best)) best = t;
  }
  return best === undefined ? undefined : new Date(best);
}
