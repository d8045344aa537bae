/**
 * /resource_providers/{uuid}/inventories[/{resource_class}]
 * (placement/handlers/inventory.py). Reads are one consistent GetItem of the provider;
 * every write is one generation-guarded transaction (usecases/placement/provider-aspects.ts).
 */
import { managedProviderRefusal } from '../core/placement/managed.js';
import { httpLambda } from '../http/apigw.js';
import { noContent } from '../http/types.js';
import type { Inventory, ProviderRecord } from '../core/placement/model.js';
import {
  capacityError,
  inventoriesView,
  inventoryInUseMessage,
  inventoryView,
  withDefaults,
  type InventoryChange,
  type InventoryInput,
} from '../core/placement/inventory.js';
import { jsonSchemaOf } from '../../schemas/json-schema.js';
import * as S from '../../schemas/placement/inventories.js';
import { changeInventories } from '../usecases/placement/provider-aspects.js';
import { customOrder, missingResourceClasses } from '../store/placement/catalog.js';
import { inResourceClassOrder } from '../core/placement/standard.js';
import { checkAccept, extractJson, floatsInBody, pyJsonResponse, requireJsonContent, cacheHeaders } from './framework/guards.js';
import { placementApp } from './framework/app.js';
import type { FamilyRoutes, PlacementRequest } from './framework/request.js';
import { ErrorCodes, PlacementError, badRequest, conflict, notFound } from '../core/placement/errors.js';
import { providerOr404 } from './provider-lookup.js';
import { providerUrl } from './views.js';

const P = 'placement:resource_providers:inventories';
const RC_RE = new RegExp(S.RC_PATTERN);

/** Inventories carry no timestamps of their own here: the provider's `updated` moves with every inventory change. */
function inventoryModified(p: ProviderRecord): Date {
  return new Date(p.updatedAt ?? p.createdAt);
}

/** An echo's allocation_ratio: a float unless the client sent an integer (the default, 1.0, is a float). */
function ratioIsFloat(r: PlacementRequest, path: string): boolean {
  const body = JSON.parse(r.http.body ?? '{}') as Record<string, unknown>;
  return !Object.hasOwn(body, 'allocation_ratio') || floatsInBody(r).has(path);
}

const reservedMayEqualTotal = (r: PlacementRequest) => r.version.atLeast(1, 26);

async function unknownClass(rc: string): Promise<boolean> {
  return (await missingResourceClasses([rc])).length > 0;
}

// ---------------------------------------------------------------- reads

async function list(r: PlacementRequest) {
  checkAccept(r);
  r.authorize(`${P}:list`);
  const uuid = r.params.uuid!;
  const p = await providerOr404(uuid, (m) => `${m} : ${m}`);
  const inventories = inResourceClassOrder(p.inventories, await customOrder({ classes: Object.keys(p.inventories) }));
  const res = pyJsonResponse(200, inventoriesView(inventories, p.generation));
  return cacheHeaders(r, res, Object.keys(p.inventories).length ? inventoryModified(p) : null);
}

async function show(r: PlacementRequest) {
  checkAccept(r);
  r.authorize(`${P}:show`);
  const uuid = r.params.uuid!;
  const rc = r.params.resource_class!;
  const p = await providerOr404(uuid, (m) => `${m} : ${m}`);
  const inv = Object.hasOwn(p.inventories, rc) ? p.inventories[rc] : undefined;
  if (!inv) throw notFound(`No inventory of class ${rc} for ${uuid}`);
  return cacheHeaders(r, pyJsonResponse(200, inventoryView(inv, p.generation)), inventoryModified(p));
}

// ---------------------------------------------------------------- writes

/** POST: add one inventory (the class must not have inventory here yet). */
async function create(r: PlacementRequest) {
  requireJsonContent(r);
  r.authorize(`${P}:create`);
  const uuid = r.params.uuid!;
  const cur = await providerOr404(uuid);
  const { resource_class: rc, resource_provider_generation: _ignored, ...data } = extractJson<S.PostInventory>(r, jsonSchemaOf(S.postInventory));
  const inventory = withDefaults(data);
  const bad = capacityError(uuid, [[rc, inventory]], reservedMayEqualTotal(r));
  const unable = (why: string) => badRequest(`Unable to create inventory for resource provider ${uuid}: ${why}`);
  if (bad) throw unable(bad);
  const res = await changeInventories(uuid, { current: cur }, { kind: 'add', resourceClass: rc, inventory });
  if ('error' in res) {
    switch (res.error) {
      case 'exists':
        throw conflict(`Update conflict: Inventory of class ${rc} already exists on resource provider ${uuid}.`, ErrorCodes.CONCURRENT_UPDATE);
      case 'unknown_class':
        throw unable(`No such resource class ${res.name}.`);
      default:
        throw writeFailure(res, uuid);
    }
  }
  const out = pyJsonResponse(201, inventoryView(inventory, res.generation, ratioIsFloat(r, 'allocation_ratio')), {
    location: `${r.http.baseUrl}${providerUrl(uuid)}/inventories/${rc}`,
  });
  return cacheHeaders(r, out, new Date());
}

/** PUT one: change an existing inventory, guarded by the client's generation. */
async function update(r: PlacementRequest) {
  requireJsonContent(r);
  r.authorize(`${P}:update`);
  const uuid = r.params.uuid!;
  const rc = r.params.resource_class!;
  const cur = await providerOr404(uuid);
  const { resource_provider_generation: generation, ...data } = extractJson<S.PutInventory>(r, jsonSchemaOf(S.putInventory));
  if (generation !== cur.generation) throw generationConflict();
  const inventory = withDefaults(data);
  const bad = capacityError(uuid, [[rc, inventory]], reservedMayEqualTotal(r));
  if (bad) throw badRequest(`Unable to update inventory for resource provider ${uuid}: ${bad}`);
  const res = await changeInventories(uuid, { current: cur, generation }, { kind: 'update', resourceClass: rc, inventory });
  if ('error' in res) {
    if (res.error === 'absent') {
      if (await unknownClass(rc)) throw escapedNotFound(`No such resource class ${rc}.`);
      throw badRequest(`No inventory record with resource class for resource provider ${uuid}: No inventory of class ${rc} found.`);
    }
    throw writeFailure(res, uuid, 'update conflict: ');
  }
  return cacheHeaders(r, pyJsonResponse(200, inventoryView(inventory, res.generation, ratioIsFloat(r, 'allocation_ratio'))), new Date());
}

/** PUT all: replace the whole inventory, guarded by the client's generation. */
async function replace(r: PlacementRequest) {
  requireJsonContent(r);
  r.authorize(`${P}:update`);
  const uuid = r.params.uuid!;
  const cur = await providerOr404(uuid);
  const data = extractJson<S.PutInventories>(r, jsonSchemaOf(S.putInventories));
  if (data.resource_provider_generation !== cur.generation) throw generationConflict();
  const inventories: Record<string, Inventory> = {};
  for (const [rc, raw] of Object.entries(data.inventories)) {
    // keys outside RC_PATTERN are not validated by upstream's schema; they can only
    // ever be unknown classes
    if (!RC_RE.test(rc)) throw unknownClassInPut(uuid, rc);
    const { resource_provider_generation: _ignored, ...fields } = raw;
    inventories[rc] = withDefaults(fields as InventoryInput);
  }
  const bad = capacityError(uuid, Object.entries(inventories), reservedMayEqualTotal(r));
  if (bad) throw badRequest(`Unable to update inventory for resource provider ${uuid}: ${bad}`);
  const res = await changeInventories(uuid, { current: cur, generation: data.resource_provider_generation }, { kind: 'replace', inventories });
  if ('error' in res) {
    if (res.error === 'unknown_class') throw unknownClassInPut(uuid, res.name);
    if (res.error === 'in_use') {
      throw conflict(`update conflict: ${inventoryInUseMessage(res.classes, uuid)}`, ErrorCodes.INVENTORY_INUSE);
    }
    throw writeFailure(res, uuid, 'update conflict: ');
  }
  // the echo of the request: its class order, its number types
  const floats = floatsInBody(r);
  const sent = (rc: string) => Object.hasOwn(data.inventories[rc] as object, 'allocation_ratio');
  const out = pyJsonResponse(
    200,
    inventoriesView(inventories, res.generation, (rc) => !sent(rc) || floats.has(`inventories/${rc}/allocation_ratio`)),
  );
  return cacheHeaders(r, out, Object.keys(inventories).length ? new Date() : null);
}

/** DELETE one (no generation in the request: a lost race re-reads and retries). */
async function removeOne(r: PlacementRequest) {
  r.authorize(`${P}:delete`);
  const uuid = r.params.uuid!;
  const rc = r.params.resource_class!;
  const cur = await providerOr404(uuid);
  const change: InventoryChange = { kind: 'delete', resourceClass: rc };
  const res = await changeInventories(uuid, { current: cur }, change);
  if ('error' in res) {
    const prefix = `No inventory of class ${rc} found for delete: `;
    switch (res.error) {
      case 'absent':
        if (await unknownClass(rc)) throw notFound(`${prefix}No such resource class ${rc}.`);
        throw notFound(`${prefix}No inventory of class ${rc} found for delete`);
      case 'in_use':
        // upstream reports an in-use class here with the concurrent-update code
        throw conflict(`Unable to delete inventory of class ${rc}: ${inventoryInUseMessage(res.classes, uuid)}`, ErrorCodes.CONCURRENT_UPDATE);
      default:
        throw writeFailure(res, uuid, `Unable to delete inventory of class ${rc}: `);
    }
  }
  return noContent();
}

/** DELETE all (1.5+; 405 below, whatever the provider). */
async function removeAll(r: PlacementRequest) {
  // version_handler('1.5', status_code=405): a bare 405, no detail
  if (!r.version.atLeast(1, 5)) throw new PlacementError(405);
  r.authorize(`${P}:delete`);
  const uuid = r.params.uuid!;
  const cur = await providerOr404(uuid);
  const res = await changeInventories(uuid, { current: cur }, { kind: 'replace', inventories: {} });
  if ('error' in res) {
    if (res.error === 'in_use') throw conflict(inventoryInUseMessage(res.classes, uuid), ErrorCodes.INVENTORY_INUSE);
    throw writeFailure(res, uuid);
  }
  return noContent();
}

// ---------------------------------------------------------------- errors

function generationConflict() {
  return conflict('resource provider generation conflict', ErrorCodes.CONCURRENT_UPDATE);
}

function unknownClassInPut(uuid: string, rc: string) {
  return badRequest(`Unknown resource class in inventory for resource provider ${uuid}: No such resource class ${rc}.`);
}

function escapedNotFound(detail: string) {
  const e = notFound(detail);
  e.escaped = true;
  return e;
}

/** The failures every write shares: provider gone, generation moved, usage appeared. */
function writeFailure(res: { error: string; classes?: string[]; by?: string }, uuid: string, prefix = ''): PlacementError {
  switch (res.error) {
    case 'managed_elsewhere':
      return conflict(managedProviderRefusal(uuid, res.by!, 'inventory'));
    case 'not_found':
      return escapedNotFound(`No resource provider with uuid ${uuid} found`);
    case 'generation':
      return generationConflict();
    case 'in_use':
      return conflict(`${prefix}${inventoryInUseMessage(res.classes ?? [], uuid)}`, ErrorCodes.INVENTORY_INUSE);
    default:
      return conflict(
        `${prefix}Another thread concurrently updated the resource provider data. Please retry your update`,
        ErrorCodes.CONCURRENT_UPDATE,
      );
  }
}

export const routes: FamilyRoutes = {
  '/resource_providers/{uuid}/inventories': { GET: list, POST: create, PUT: replace, DELETE: removeAll },
  '/resource_providers/{uuid}/inventories/{resource_class}': { GET: show, PUT: update, DELETE: removeOne },
};
export const handler = httpLambda(placementApp(routes), 'placement-inventories');
