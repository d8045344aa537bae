/**
 * /allocations/{consumer_uuid} (GET, PUT, DELETE), POST /allocations and
 * /resource_providers/{uuid}/allocations (placement/handlers/allocation.py).
 * Every write is one claim transaction (functions/store/placement/allocations.ts) planned by the
 * pure rules in functions/core/placement/claim.ts and functions/core/placement/consumers.ts.
 */
import type * as z from 'zod';
import { count } from '../observability/powertools.js';
import { httpLambda } from '../http/apigw.js';
import { noContent } from '../http/types.js';
import { canonicalUuid, isUuidLike } from '../core/compat/uuid.js';
import type { AllocationMap, GenerationCheck } from '../core/placement/consumers.js';
import type { ClaimFailure, ConsumerRequest } from '../core/placement/claim.js';
import { jsonSchemaOf } from '../../schemas/json-schema.js';
import * as S from '../../schemas/placement/allocations.js';
import { consumerAllocations, providerWithAllocations } from '../store/placement/allocations.js';
import { claimAllocations, deleteConsumerAllocations } from '../usecases/placement/allocations.js';
import { RetriesExhausted } from '../store/ddb/retry.js';
import { customOrder } from '../store/placement/catalog.js';
import { providerAllocationOrder } from '../core/placement/order.js';
import { cacheHeaders, checkAccept, extractJson, jsonResponse, forVersion, requireJsonContent, requireVersion } from './framework/guards.js';
import { placementApp } from './framework/app.js';
import type { FamilyRoutes, PlacementRequest } from './framework/request.js';
import { ErrorCodes, type PlacementError, badRequest, conflict, notFound } from '../core/placement/errors.js';
import { lastModified } from './views.js';

const A = 'placement:allocations';
const RP_ALLOC_LIST = 'placement:resource_providers:allocations:list';

/** ConcurrentUpdateDetected's text, as the allocation handlers wrap it */
export const CONCURRENT_UPDATE_TEXT = 'Another thread concurrently updated the data. Please retry your update';

// ------------------------------------------------------------------ requests

/** The consumer_generation rule of the request's microversion (seed 000). */
export function generationCheck(r: PlacementRequest, given: number | null | undefined): GenerationCheck {
  return r.version.atLeast(1, 28) ? { check: true, expected: given ?? null } : { check: false };
}

/** Provider uuids as keys of our items (upstream's MySQL compares them case-insensitively). */
function normalizeAllocations(a: Record<string, { resources: Record<string, number> }>): AllocationMap {
  const out: AllocationMap = {};
  for (const [rp, v] of Object.entries(a)) out[rp.toLowerCase()] = { ...v.resources };
  return out;
}

/** POST /allocations and POST /reshaper bodies: one request per consumer. */
export function consumerRequests(r: PlacementRequest, data: S.PostAllocations): ConsumerRequest[] {
  const byConsumer = new Map<string, ConsumerRequest>();
  for (const [uuid, c] of Object.entries(data)) {
    const consumer = uuid.toLowerCase();
    byConsumer.set(consumer, {
      uuid: consumer,
      allocations: normalizeAllocations(c.allocations),
      project: c.project_id,
      user: c.user_id,
      type: r.version.atLeast(1, 38) ? c.consumer_type : undefined,
      generation: generationCheck(r, c.consumer_generation),
    });
  }
  return [...byConsumer.values()];
}

/** The claim failures as the allocation handlers render them. */
function claimError(f: ClaimFailure, notFoundPrefix: string): PlacementError {
  switch (f.error) {
    case 'consumer_generation':
      return conflict(f.detail, ErrorCodes.CONCURRENT_UPDATE);
    case 'provider_missing':
      return badRequest(f.detail);
    case 'class_missing':
      return badRequest(`${notFoundPrefix}${f.detail}`);
    case 'invalid_inventory':
      return conflict(`Unable to allocate inventory: ${f.detail}`);
    case 'managed_elsewhere':
      return conflict(f.detail);
  }
}

async function claim(requests: ConsumerRequest[], notFoundPrefix: string) {
  let out: true | ClaimFailure;
  try {
    out = await claimAllocations(requests);
  } catch (e) {
    if (e instanceof RetriesExhausted) {
      count('ClaimConflicts');
      throw conflict(`Inventory and/or allocations changed while attempting to allocate: ${CONCURRENT_UPDATE_TEXT}`, ErrorCodes.CONCURRENT_UPDATE);
    }
    throw e;
  }
  if (out !== true) {
    count('ClaimsRefused');
    throw claimError(out, notFoundPrefix);
  }
  count('Claims');
}

// ------------------------------------------------------------------ handlers

async function listForConsumer(r: PlacementRequest) {
  checkAccept(r);
  r.authorize(`${A}:list`);
  const consumer = r.params.consumer_uuid!.toLowerCase();
  const found = await consumerAllocations(consumer);
  const body: Record<string, unknown> = { allocations: {} };
  if (found) {
    const { record, providers } = found;
    const allocations: Record<string, unknown> = {};
    for (const [rp, resources] of Object.entries(record.allocations)) {
      allocations[rp] = { resources, generation: providers.get(rp)?.generation };
    }
    body.allocations = allocations;
    if (r.version.atLeast(1, 12)) {
      body.project_id = record.project;
      body.user_id = record.user;
      if (r.version.atLeast(1, 28)) body.consumer_generation = record.generation;
      if (r.version.atLeast(1, 38)) body.consumer_type = record.type ?? 'unknown';
    }
  }
  return cacheHeaders(r, jsonResponse(200, body), found?.record.updatedAt);
}

async function listForProvider(r: PlacementRequest) {
  checkAccept(r);
  r.authorize(RP_ALLOC_LIST);
  const uuid = r.params.uuid!;
  const found = await providerWithAllocations(uuid);
  if (!found) throw notFound(`Resource provider '${uuid}' not found: No resource provider with uuid ${uuid} found`);
  const withGen = r.version.atLeast(1, 28);
  const allocations: Record<string, unknown> = {};
  const order = await customOrder({ classes: Object.keys(found.provider.inventories) });
  for (const row of providerAllocationOrder(found.rows, order)) {
    allocations[row.consumer] = { resources: row.resources, ...(withGen ? { consumer_generation: row.generation } : {}) };
  }
  const body = { allocations, resource_provider_generation: found.provider.generation };
  return cacheHeaders(r, jsonResponse(200, body), lastModified(found.rows));
}

async function setForConsumer(r: PlacementRequest) {
  const v = r.version;
  requireJsonContent(r);
  r.authorize(`${A}:update`);
  const raw = r.params.consumer_uuid!;
  if (!isUuidLike(raw)) throw badRequest(`Malformed consumer_uuid: ${raw}`);
  const consumer = canonicalUuid(raw);
  const schema = forVersion<z.ZodType>(r, [
    [1, 38, S.putAllocationsV1_38],
    [1, 34, S.putAllocationsV1_34],
    [1, 28, S.putAllocationsV1_28],
    [1, 12, S.putAllocationsV1_12],
    [1, 8, S.putAllocationsListV1_8],
    [1, 0, S.putAllocationsList],
  ]);
  let allocations: AllocationMap;
  let data: { project_id?: string; user_id?: string; consumer_generation?: number | null; consumer_type?: string };
  if (v.atLeast(1, 12)) {
    const d = extractJson<S.ConsumerAllocations>(r, jsonSchemaOf(schema));
    allocations = normalizeAllocations(d.allocations);
    data = d;
  } else {
    const d = extractJson<S.PutAllocationsList>(r, jsonSchemaOf(schema));
    allocations = {};
    for (const a of d.allocations) allocations[a.resource_provider.uuid.toLowerCase()] = { ...a.resources };
    data = d;
  }
  // before 1.8 the request names no owner: the configured "incomplete consumer" one
  const incomplete = data.project_id === undefined;
  await claim(
    [
      {
        uuid: consumer,
        allocations,
        project: incomplete ? r.config.incompleteConsumerProjectId : data.project_id!,
        user: incomplete ? r.config.incompleteConsumerUserId : data.user_id!,
        type: v.atLeast(1, 38) ? data.consumer_type : undefined,
        generation: generationCheck(r, data.consumer_generation),
      },
    ],
    `Unable to allocate inventory for consumer ${consumer}: `,
  );
  return noContent();
}

async function setAllocations(r: PlacementRequest) {
  requireVersion(r, '1.13');
  requireJsonContent(r);
  r.authorize(`${A}:manage`);
  const schema = forVersion(r, [
    [1, 38, S.postAllocationsV1_38],
    [1, 34, S.postAllocationsV1_34],
    [1, 28, S.postAllocationsV1_28],
    [1, 13, S.postAllocationsV1_13],
  ]);
  const data = extractJson<S.PostAllocations>(r, jsonSchemaOf(schema));
  await claim(consumerRequests(r, data), 'Unable to allocate inventory ');
  return noContent();
}

async function removeForConsumer(r: PlacementRequest) {
  r.authorize(`${A}:delete`);
  const raw = r.params.consumer_uuid!;
  const deleted = await deleteConsumerAllocations(raw.toLowerCase());
  if (deleted === false) throw notFound(`No allocations for consumer '${raw}'`);
  if (deleted !== true) throw claimError(deleted, '');
  return noContent();
}

export const routes: FamilyRoutes = {
  '/allocations': { POST: setAllocations },
  '/allocations/{consumer_uuid}': { GET: listForConsumer, PUT: setForConsumer, DELETE: removeForConsumer },
  '/resource_providers/{uuid}/allocations': { GET: listForProvider },
};
export const handler = httpLambda(placementApp(routes), 'placement-allocations');
