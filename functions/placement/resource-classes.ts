/**
 * /resource_classes and /resource_classes/{name} (placement/handlers/resource_class.py),
 * from 1.2. The 21 standard classes are known in code; custom ones are items
 * (functions/store/placement/resource-classes.ts). PUT renames at 1.2-1.6 and is an idempotent
 * create from 1.7.
 */
import { httpLambda } from '../http/apigw.js';
import { noContent } from '../http/types.js';
import { STANDARD_RESOURCE_CLASSES, isStandardResourceClass } from '../core/placement/standard.js';
import { jsonSchemaOf } from '../../schemas/json-schema.js';
import * as S from '../../schemas/placement/resource-classes.js';
import {
  createCustomResourceClass,
  deleteCustomResourceClass,
  getCustomResourceClass,
  listCustomResourceClasses,
  renameCustomResourceClass,
  type CustomResourceClass,
} from '../store/placement/resource-classes.js';
import { checkAccept, extractJson, jsonResponse, requireJsonContent, requireVersion, cacheHeaders } from './framework/guards.js';
import { placementApp } from './framework/app.js';
import type { FamilyRoutes, PlacementRequest } from './framework/request.js';
import { badRequest, conflict, notFound } from '../core/placement/errors.js';

const P = 'placement:resource_classes';

const url = (name: string) => `/resource_classes/${name}`;

/** handlers.resource_class._serialize_resource_class */
function view(name: string) {
  return { name, links: [{ rel: 'self', href: url(name) }] };
}

const modified = (rc: CustomResourceClass) => new Date(rc.updatedAt ?? rc.createdAt);

/** ResourceClass.get_by_name: a standard class (no record) or a custom one, else the escaped 404. */
async function classOr404(name: string): Promise<{ standard: true } | { standard: false; rc: CustomResourceClass }> {
  if (isStandardResourceClass(name)) return { standard: true };
  const rc = await getCustomResourceClass(name);
  if (!rc) throw noSuchClass(name);
  return { standard: false, rc };
}

function noSuchClass(name: string) {
  const e = notFound(`No such resource class ${name}.`);
  e.escaped = true;
  return e;
}

async function list(r: PlacementRequest) {
  requireVersion(r, '1.2');
  checkAccept(r);
  r.authorize(`${P}:list`);
  const custom = await listCustomResourceClasses();
  const res = jsonResponse(200, { resource_classes: [...STANDARD_RESOURCE_CLASSES, ...custom.map((c) => c.name)].map(view) });
  let last: Date | undefined;
  for (const c of custom) if (!last || modified(c) > last) last = modified(c);
  return cacheHeaders(r, res, last ?? new Date());
}

async function show(r: PlacementRequest) {
  requireVersion(r, '1.2');
  checkAccept(r);
  r.authorize(`${P}:show`);
  const name = r.params.name!;
  const found = await classOr404(name);
  return cacheHeaders(r, jsonResponse(200, view(name)), found.standard ? new Date() : modified(found.rc));
}

async function create(r: PlacementRequest) {
  requireVersion(r, '1.2');
  requireJsonContent(r);
  r.authorize(`${P}:create`);
  const { name } = extractJson<S.ResourceClassBody>(r, jsonSchemaOf(S.postResourceClass));
  const rc = await createCustomResourceClass(name);
  if (!rc) throw conflict(`Conflicting resource class already exists: ${name}`);
  return { status: 201, headers: { location: `${r.http.baseUrl}${url(name)}` } };
}

/** PUT at 1.2-1.6: rename a custom class. */
async function rename(r: PlacementRequest) {
  requireJsonContent(r);
  r.authorize(`${P}:update`);
  const name = r.params.name!;
  const { name: to } = extractJson<S.ResourceClassBody>(r, jsonSchemaOf(S.putResourceClass));
  const found = await classOr404(name);
  if (found.standard) throw badRequest(`Cannot update standard resource class ${name}`);
  if (to === name) return jsonResponse(200, view(to));
  const res = await renameCustomResourceClass(found.rc, to);
  if ('ok' in res) return jsonResponse(200, view(res.ok.name));
  switch (res.error) {
    case 'exists':
      throw conflict(`Resource class already exists: ${to}`);
    case 'not_found':
      throw noSuchClass(name);
    case 'in_use':
      throw conflict(
        `Cannot update resource class ${name}: it is in use in inventory. Create ${to} and move the inventory and allocations to it instead.`,
      );
  }
}

/** PUT from 1.7: create the class unless it exists (201 / 204). */
async function ensure(r: PlacementRequest) {
  r.authorize(`${P}:update`);
  const name = r.params.name!;
  // upstream validates the name by formatting it into a JSON body
  extractJson({ http: { ...r.http, body: `{"name": "${name}"}` } } as PlacementRequest, jsonSchemaOf(S.putResourceClass));
  let status = 204;
  if (!isStandardResourceClass(name) && !(await getCustomResourceClass(name))) {
    if (await createCustomResourceClass(name)) status = 201; // else someone just created it: 204
  }
  return { status, headers: { location: `${r.http.baseUrl}${url(name)}` } };
}

async function update(r: PlacementRequest) {
  requireVersion(r, '1.2');
  return r.version.atLeast(1, 7) ? ensure(r) : rename(r);
}

async function remove(r: PlacementRequest) {
  requireVersion(r, '1.2');
  r.authorize(`${P}:delete`);
  const name = r.params.name!;
  const found = await classOr404(name);
  if (found.standard) throw badRequest(`Error in delete resource class: Cannot delete standard resource class ${name}.`);
  const res = await deleteCustomResourceClass(name);
  if ('error' in res && res.error === 'not_found') throw noSuchClass(name);
  if ('error' in res) throw conflict(`Error in delete resource class: Cannot delete resource class ${name}. Class is in use in inventory.`);
  return noContent();
}

export const routes: FamilyRoutes = {
  '/resource_classes': { GET: list, POST: create },
  '/resource_classes/{name}': { GET: show, PUT: update, DELETE: remove },
};
export const handler = httpLambda(placementApp(routes), 'placement-resource-classes');
