/**
 * /resource_providers and /resource_providers/{uuid}
 * (placement/handlers/resource_provider.py). Lists are answered from the warm
 * provider snapshot; single reads and all writes go to DynamoDB.
 */
import { httpLambda } from '../http/apigw.js';
import { noContent } from '../http/types.js';
import { canonicalUuid, newUuid } from '../core/compat/uuid.js';
import { filterProviders, sharingQuery, type ProviderFilters } from '../core/placement/provider-filters.js';
import { parseMemberOfParams, parseResources, parseTraitsParams } from '../core/placement/query.js';
import { bad } from '../core/errors.js';
import { managedProviderRefusal } from '../core/placement/managed.js';
import { jsonSchemaOf } from '../../schemas/json-schema.js';
import * as S from '../../schemas/placement/resource-providers.js';
import { getProvider, providersFor, readSharingProviders } from '../store/placement/providers.js';
import { createProvider, deleteProvider, updateProvider } from '../usecases/placement/providers.js';
import { prewarm, snapshot } from '../store/placement/snapshot.js';
import { layoutMigrating } from '../store/layout/state.js';
import { Forest } from '../core/placement/forest.js';
import { missingResourceClasses, missingTraits } from '../store/placement/catalog.js';
import { cacheHeaders, checkAccept, extractJson, jsonResponse, forVersion, requireJsonContent, validateQuery } from './framework/guards.js';
import { placementApp } from './framework/app.js';
import type { FamilyRoutes, PlacementRequest } from './framework/request.js';
import { refuseHopeless } from './framework/too-large.js';
import { ErrorCodes, PlacementError, conflict, notFound } from '../core/placement/errors.js';
import { lastModified, providerUrl, providerView } from './views.js';

const P = 'placement:resource_providers';

async function create(r: PlacementRequest) {
  requireJsonContent(r);
  r.authorize(`${P}:create`);
  const schema = r.version.atLeast(1, 14) ? S.createProviderV1_14 : S.createProvider;
  const data = extractJson<S.CreateProvider>(r, jsonSchemaOf(schema));
  const uuid = data.uuid ? canonicalUuid(data.uuid) : newUuid();
  const parent = data.parent_provider_uuid ?? undefined;
  const fail = (error: string) =>
    new PlacementError(400, `Unable to create resource provider "${data.name}", ${uuid}: Object action create failed because: ${error}`);
  if (!data.name) throw fail('name is required');
  if (parent !== undefined && parent === uuid) {
    throw fail('parent provider UUID cannot be same as UUID. Please set parent provider UUID to None if there is no parent.');
  }
  const res = await createProvider({ uuid, name: data.name, parent });
  if ('error' in res) {
    if (res.error === 'parent_missing') throw fail('parent provider UUID does not exist.');
    // upstream names the unique constraint the database reports; when both are taken
    // that is the name (as Placement on SQLite, which its own functional tests use)
    const dup = res.name ? `name: ${data.name}` : `uuid: ${uuid}`;
    throw conflict(`Conflicting resource provider ${dup} already exists.`, ErrorCodes.DUPLICATE_NAME);
  }
  const headers = { location: `${r.http.baseUrl}${providerUrl(uuid)}` };
  if (r.version.atLeast(1, 20)) {
    const out = jsonResponse(200, providerView(r, res), headers);
    out.headers['cache-control'] = 'no-cache';
    out.headers['last-modified'] = new Date(res.updatedAt).toUTCString();
    return out;
  }
  return { status: 201, headers, body: '' };
}

async function show(r: PlacementRequest) {
  checkAccept(r);
  r.authorize(`${P}:show`);
  const p = await getProvider(r.params.uuid!);
  if (!p) {
    const e = notFound(`No resource provider with uuid ${r.params.uuid} found`);
    e.escaped = true;
    throw e;
  }
  return cacheHeaders(r, jsonResponse(200, providerView(r, p)), p.updatedAt);
}

/** the smallest a provider renders in a list: uuid, name, generation, three links (1.0) */
const MIN_PROVIDER_BYTES = 250;

async function list(r: PlacementRequest) {
  checkAccept(r);
  r.authorize(`${P}:list`);
  const v = r.version;
  const schema = forVersion(r, [
    [1, 18, S.listProvidersQuery1_18],
    [1, 14, S.listProvidersQuery1_14],
    [1, 4, S.listProvidersQuery1_4],
    [1, 3, S.listProvidersQuery1_3],
    [1, 0, S.listProvidersQuery1_0],
  ]);
  validateQuery(r, jsonSchemaOf(schema));
  const q = r.query;
  const f: ProviderFilters = {};
  if (q.has('member_of')) f.aggregates = parseMemberOfParams(q.getAll('member_of'), '', v.atLeast(1, 24), v.atLeast(1, 32));
  if (q.has('required')) f.traits = parseTraitsParams(q.getAll('required'), v.atLeast(1, 22), v.atLeast(1, 39));
  // upstream filters on uuid / name / in_tree only when the value is non-empty
  if (q.get('uuid')) f.uuid = q.get('uuid');
  if (q.get('name')) f.name = q.get('name');
  if (q.get('in_tree')) f.inTree = q.get('in_tree');
  if (q.has('resources')) f.resources = parseResources(q.get('resources')!);
  const src = await providersToFilter(f);
  const found = (await unknownOrEmpty(src, f)) ? [] : filterProviders(src.forest, f);
  // a provider renders to at least its uuid and three links (1.0); at a million that cannot be sent
  refuseHopeless(r, found.length, MIN_PROVIDER_BYTES);
  const res = jsonResponse(200, { resource_providers: found.map((p) => providerView(r, p)) });
  return cacheHeaders(r, res, lastModified(found));
}

/** the warm snapshot, or the providers a uuid, name, tree or sharing query narrowed the read to */
type FilterSource = { forest: Forest; whole: boolean };

/**
 * What a list filters: narrowed by uuid, name or tree, the providers those name; asking
 * only for the sharing providers of some aggregates, those (what Nova's report client asks
 * for every compute host every few minutes) — read from their own items and the
 * aggregates' lists, no change-log poll; anything else the warm snapshot.
 */
async function providersToFilter(f: ProviderFilters): Promise<FilterSource> {
  const sharing = sharingQuery(f);
  const narrowed = f.uuid !== undefined || f.name !== undefined || f.inTree !== undefined;
  // a table migrating from layout 1 has its tree and sharing-list items only once complete
  const indexed = f.inTree === undefined && !sharing ? true : !(await layoutMigrating());
  if ((!narrowed && !sharing) || !indexed) return { forest: await snapshot().fresh(), whole: true };
  const forest = new Forest();
  forest.putMany(narrowed ? await providersFor(f) : await readSharingProviders(sharing!));
  return { forest, whole: false };
}

/**
 * resource_provider._get_all_by_filters_from_db checks names and short-cuts in this
 * order: a missing in_tree provider -> []; unknown required traits -> 400; no provider
 * with the required traits -> []; unknown forbidden traits -> 400; no provider in the
 * required aggregates -> []; unknown resource classes -> 400. True when the answer is
 * empty before any filtering. Upstream takes the two short-cuts over every provider, not
 * only those uuid or name select: when the narrowed read has none and a 400 would follow,
 * the whole snapshot decides (only a request naming an unknown trait or class pays for it).
 */
async function unknownOrEmpty(src: FilterSource, f: ProviderFilters): Promise<boolean> {
  const { forest } = src;
  if (f.inTree !== undefined && !forest.get(f.inTree)) return true;
  const badTrait = (name: string) => bad(`Invalid trait(s) in "required" parameter: No such trait(s): ${name}.`);
  const required = f.traits?.required ?? [];
  const missingRequired = required.length ? await missingTraits(required.flatMap((any) => [...any])) : [];
  if (missingRequired.length) throw badTrait(missingRequired[0]!);
  // looked up when a check needs them, as upstream does (each at most once)
  let forbiddenP: Promise<string[]> | undefined;
  let classesP: Promise<string[]> | undefined;
  const missingForbidden = () => (forbiddenP ??= f.traits?.forbidden.size ? missingTraits(f.traits.forbidden) : Promise.resolve([]));
  const missingClasses = () => (classesP ??= f.resources ? missingResourceClasses(Object.keys(f.resources)) : Promise.resolve([]));
  const noneMatch = async (g: ProviderFilters, errorFollows: () => Promise<boolean>) =>
    !filterProviders(forest, g).length && (src.whole || !(await errorFollows()) || !filterProviders(await snapshot().fresh(), g).length);
  const forbiddenOrClassUnknown = async () => (await missingForbidden()).length > 0 || (await missingClasses()).length > 0;
  const classUnknown = async () => (await missingClasses()).length > 0;
  if (required.length && (await noneMatch({ traits: { required, forbidden: new Set() } }, forbiddenOrClassUnknown))) return true;
  const [unknownTrait] = await missingForbidden();
  if (unknownTrait !== undefined) throw badTrait(unknownTrait);
  const aggregates = f.aggregates?.required ?? [];
  if (aggregates.length && (await noneMatch({ aggregates: { required: aggregates, forbidden: new Set() } }, classUnknown))) return true;
  const [unknownClass] = await missingClasses();
  if (unknownClass !== undefined) throw bad(`Invalid resource class in resources parameter: No such resource class ${unknownClass}.`);
  return false;
}

async function update(r: PlacementRequest) {
  requireJsonContent(r);
  const uuid = r.params.uuid!;
  r.authorize(`${P}:update`);
  const cur = await getProvider(uuid);
  if (!cur) {
    const e = notFound(`No resource provider with uuid ${uuid} found`);
    e.escaped = true;
    throw e;
  }
  const schema = r.version.atLeast(1, 14) ? S.updateProviderV1_14 : S.updateProvider;
  const data = extractJson<S.UpdateProvider>(r, jsonSchemaOf(schema));
  const change: { name?: string; parent?: string | null } = { name: data.name };
  if ('parent_provider_uuid' in data) change.parent = data.parent_provider_uuid ?? null;
  const res = await updateProvider(uuid, change, {
    allowReparenting: r.version.atLeast(1, 37),
    subtree: async (u) => (await snapshot().fresh(0)).subtree(u),
  });
  if ('error' in res) {
    const unable = (why: string) => new PlacementError(400, `Unable to save resource provider ${uuid}: ${why}`);
    switch (res.error) {
      case 'not_found': {
        const e = notFound(`No resource provider with uuid ${uuid} found`);
        e.escaped = true;
        throw e;
      }
      case 'duplicate_name':
        throw conflict(`Conflicting resource provider ${data.name} already exists.`, ErrorCodes.DUPLICATE_NAME);
      case 'parent_missing':
        throw unable('Object action create failed because: parent provider UUID does not exist.');
      case 'reparent_not_allowed':
        throw unable('Object action update failed because: re-parenting a provider is not currently allowed.');
      case 'unparent_not_allowed':
        throw unable('Object action update failed because: un-parenting a provider is not currently allowed.');
      case 'loop':
        throw unable('Object action update failed because: creating loop in the provider tree is not allowed.');
    }
  }
  const out = jsonResponse(200, providerView(r, res));
  return cacheHeaders(r, out, res.updatedAt);
}

async function remove(r: PlacementRequest) {
  const uuid = r.params.uuid!;
  r.authorize(`${P}:delete`);
  const res = await deleteProvider(uuid);
  if (res !== true) {
    switch (res.error) {
      case 'not_found':
        throw notFound(`No resource provider with uuid ${uuid} found for delete`);
      case 'has_children':
        throw conflict(
          `Unable to delete parent resource provider ${uuid}: It has child resource providers.`,
          ErrorCodes.PROVIDER_CANNOT_DELETE_PARENT,
        );
      case 'in_use':
        throw conflict(`Unable to delete resource provider ${uuid}: Resource provider has allocations.`, ErrorCodes.PROVIDER_IN_USE);
      case 'managed_elsewhere':
        throw conflict(managedProviderRefusal(uuid, res.by, 'existence'));
    }
  }
  return noContent();
}

export const routes: FamilyRoutes = {
  '/resource_providers': { GET: list, POST: create },
  '/resource_providers/{uuid}': { GET: show, PUT: update, DELETE: remove },
};
export const handler = httpLambda(placementApp(routes), 'placement-resource-providers');

// the forest loads while the Lambda initialises (cdk/ sets SNAPSHOT_PREWARM on this function)
await prewarm();
