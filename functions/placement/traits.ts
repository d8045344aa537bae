/**
 * /traits, /traits/{name} and /resource_providers/{uuid}/traits (placement/handlers/trait.py),
 * all from microversion 1.6. Standard traits are known in code; custom ones are items
 * with a reference count (functions/store/placement/traits.ts). Provider traits are written with
 * one generation-guarded transaction.
 */
import { managedProviderRefusal } from '../core/placement/managed.js';
import { httpLambda } from '../http/apigw.js';
import { noContent, type HttpResponse } from '../http/types.js';
import { STANDARD_TRAITS, isStandardTrait, sortTraits } from '../core/placement/standard.js';
import { validate } from '../core/compat/jsonschema.js';
import { jsonSchemaOf } from '../../schemas/json-schema.js';
import * as S from '../../schemas/placement/traits.js';
import { createCustomTrait, deleteCustomTrait, getCustomTrait, listCustomTraits } from '../store/placement/traits.js';
import { replaceTraits } from '../usecases/placement/provider-aspects.js';
import { prewarm, snapshot } from '../store/placement/snapshot.js';
import { customOrder } from '../store/placement/catalog.js';
import { checkAccept, extractJson, jsonResponse, requireJsonContent, requireVersion, validateQuery, cacheHeaders } from './framework/guards.js';
import { placementApp } from './framework/app.js';
import type { FamilyRoutes, PlacementRequest } from './framework/request.js';
import { ErrorCodes, badRequest, conflict, notFound } from '../core/placement/errors.js';
import { providerOr404, providerNotFound } from './provider-lookup.js';

const T = 'placement:traits';
const RPT = 'placement:resource_providers:traits';

/** Standard traits carry no timestamp here; like upstream's fallback they date from now. */
function newest(dates: Array<string | undefined>): Date {
  let best: number | undefined;
  for (const d of dates) {
    const t = d === undefined ? Date.now() : Date.parse(d);
    if (!Number.isNaN(t) && (best === undefined || t > best)) best = t;
  }
  return best === undefined ? new Date() : new Date(best);
}

const INVALID_TRAIT =
  'The trait is invalid. A valid trait must be no longer than 255 characters, start with the prefix "CUSTOM_" and use following characters: "A"-"Z", "0"-"9" and "_"';

// ---------------------------------------------------------------- /traits

async function putTrait(r: PlacementRequest) {
  requireVersion(r, '1.6');
  r.authorize(`${T}:update`);
  const name = r.params.name!;
  try {
    validate(name, jsonSchemaOf(S.customTrait));
  } catch {
    throw badRequest(INVALID_TRAIT);
  }
  let status = 204;
  let created: string | undefined = (await getCustomTrait(name))?.createdAt;
  if (created === undefined) {
    const res = await createCustomTrait(name);
    if (res.created) {
      status = 201;
      created = res.trait!.createdAt;
    }
  }
  const res: HttpResponse = { status, headers: { location: `${r.http.baseUrl}/traits/${name}` } };
  return cacheHeaders(r, res, created ? new Date(created) : new Date());
}

/** The trait's creation time (undefined for a standard one), or a 404. */
async function traitOr404(name: string): Promise<{ standard: boolean; createdAt?: string }> {
  if (isStandardTrait(name)) return { standard: true };
  const t = await getCustomTrait(name);
  if (!t) throw notFound(`No such trait(s): ${name}.`);
  return { standard: false, createdAt: t.createdAt };
}

async function getTrait(r: PlacementRequest) {
  requireVersion(r, '1.6');
  r.authorize(`${T}:show`);
  const t = await traitOr404(r.params.name!);
  return cacheHeaders(r, noContent(), newest([t.createdAt]));
}

async function deleteTrait(r: PlacementRequest) {
  requireVersion(r, '1.6');
  r.authorize(`${T}:delete`);
  const name = r.params.name!;
  const t = await traitOr404(name);
  if (t.standard) throw badRequest(`Cannot delete standard trait ${name}.`);
  const res = await deleteCustomTrait(name);
  if ('error' in res && res.error === 'not_found') throw notFound(`No such trait(s): ${name}.`);
  if ('error' in res) throw conflict(`The trait ${name} is in use by a resource provider.`);
  return noContent();
}

async function listTraits(r: PlacementRequest) {
  requireVersion(r, '1.6');
  checkAccept(r);
  r.authorize(`${T}:list`);
  validateQuery(r, jsonSchemaOf(S.listTraitsQuery));
  let nameIn: Set<string> | undefined;
  let prefix: string | undefined;
  let associated: boolean | undefined;
  const q = r.query;
  if (q.has('name')) {
    const v = q.get('name')!;
    const i = v.indexOf(':');
    if (i < 0) {
      throw badRequest(
        `Badly formatted name parameter. Expected name query string parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. Got: "${v}"`,
      );
    }
    const op = v.slice(0, i);
    if (op === 'in') nameIn = new Set(v.slice(i + 1).split(','));
    else if (op === 'startswith') prefix = v.slice(i + 1);
  }
  if (q.has('associated')) {
    const a = q.get('associated')!.toLowerCase();
    if (a !== 'true' && a !== 'false') throw badRequest('The query parameter "associated" only accepts "true" or "false"');
    associated = a === 'true';
  }
  // in Placement's trait order (standard, then custom as created: listCustomTraits' order)
  const custom = await listCustomTraits();
  let all: Array<{ name: string; createdAt?: string }> = [
    ...STANDARD_TRAITS.map((name) => ({ name })),
    ...custom.map((t) => ({ name: t.name, createdAt: t.createdAt })),
  ];
  if (nameIn) all = all.filter((t) => nameIn.has(t.name));
  if (prefix !== undefined) all = all.filter((t) => t.name.startsWith(prefix));
  if (associated !== undefined) {
    const forest = await snapshot().fresh();
    all = all.filter((t) => (forest.byTrait.get(t.name)?.size ?? 0) > 0 === associated);
  }
  // upstream's `name=in:` query is answered through the unique index on the name: by name
  if (nameIn) all.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const res = jsonResponse(200, { traits: all.map((t) => t.name) });
  return cacheHeaders(r, res, newest(all.map((t) => t.createdAt)));
}

// ---------------------------------------------------------------- provider traits

async function listProviderTraits(r: PlacementRequest) {
  requireVersion(r, '1.6');
  checkAccept(r);
  r.authorize(`${RPT}:list`);
  const p = await providerOr404(r.params.uuid!, (m) => `${m}: ${m}`);
  const traits = sortTraits(p.traits, await customOrder({ traits: p.traits }));
  const res = jsonResponse(200, { traits, resource_provider_generation: p.generation });
  return cacheHeaders(r, res, new Date());
}

async function setTraits(r: PlacementRequest) {
  requireVersion(r, '1.6');
  requireJsonContent(r);
  r.authorize(`${RPT}:update`);
  const uuid = r.params.uuid!;
  const data = extractJson<S.SetProviderTraits>(r, jsonSchemaOf(S.setProviderTraits));
  const cur = await providerOr404(uuid);
  const res = await replaceTraits(uuid, { generation: data.resource_provider_generation, current: cur }, data.traits);
  if ('error' in res) {
    switch (res.error) {
      case 'not_found':
        throw providerNotFound(uuid);
      case 'generation':
        throw conflict("Resource provider's generation already changed. Please update the generation and try again.", ErrorCodes.CONCURRENT_UPDATE);
      case 'unknown_traits':
        throw badRequest(`No such trait ${res.names.join(', ')}`);
      case 'managed_elsewhere':
        throw conflict(managedProviderRefusal(uuid, res.by, 'traits'));
    }
  }
  // upstream answers with the traits it looked up by name (`name IN (...)`: by name)
  const out = jsonResponse(200, { traits: [...res.traits].sort(), resource_provider_generation: res.generation });
  return cacheHeaders(r, out, new Date());
}

async function deleteTraits(r: PlacementRequest) {
  requireVersion(r, '1.6');
  r.authorize(`${RPT}:delete`);
  const uuid = r.params.uuid!;
  const cur = await providerOr404(uuid);
  const res = await replaceTraits(uuid, { current: cur }, []);
  if ('error' in res) {
    if (res.error === 'not_found') throw providerNotFound(uuid);
    if (res.error === 'managed_elsewhere') throw conflict(managedProviderRefusal(uuid, res.by, 'traits'));
    throw conflict('Another thread concurrently updated the resource provider data. Please retry your update', ErrorCodes.CONCURRENT_UPDATE);
  }
  return noContent();
}

export const routes: FamilyRoutes = {
  '/traits': { GET: listTraits },
  '/traits/{name}': { GET: getTrait, PUT: putTrait, DELETE: deleteTrait },
  '/resource_providers/{uuid}/traits': { GET: listProviderTraits, PUT: setTraits, DELETE: deleteTraits },
};
export const handler = httpLambda(placementApp(routes), 'placement-traits');

// the forest loads while the Lambda initialises (cdk/ sets SNAPSHOT_PREWARM on this function)
await prewarm();
