/**
 * Placement's URL map (placement/handler.py ROUTE_DECLARATIONS), each route tagged
 * with the resource-family Lambda that serves it and each method with what it does.
 * The one description of every endpoint: cdk/ turns it into API Gateway routes (and
 * gives the families whose operations answer from the provider forest the memory and
 * the init-time load they need), the local runtime routes with it, the dispatcher
 * answers 404/405 from it, and scripts/openapi-document.ts builds the OpenAPI document
 * from it. Methods are listed in Placement's order (that is the Allow header).
 * Schemas are named, not imported (SchemaRef): every family's bundle holds this table.
 */
import { forestFamilies, routeTable, schemasIn } from '../http/router.js';
import type * as RP from '../../schemas/placement/resource-providers.js';
import type * as INV from '../../schemas/placement/inventories.js';
import type * as AGG from '../../schemas/placement/aggregates.js';
import type * as ALLOC from '../../schemas/placement/allocations.js';
import type * as AC from '../../schemas/placement/allocation-candidates.js';
import type * as RC from '../../schemas/placement/resource-classes.js';
import type * as TR from '../../schemas/placement/traits.js';
import type * as US from '../../schemas/placement/usages.js';
import type * as RS from '../../schemas/placement/reshaper.js';

const rp = schemasIn<typeof RP>('placement/resource-providers');
const inv = schemasIn<typeof INV>('placement/inventories');
const agg = schemasIn<typeof AGG>('placement/aggregates');
const alloc = schemasIn<typeof ALLOC>('placement/allocations');
const ac = schemasIn<typeof AC>('placement/allocation-candidates');
const rc = schemasIn<typeof RC>('placement/resource-classes');
const tr = schemasIn<typeof TR>('placement/traits');
const us = schemasIn<typeof US>('placement/usages');
const rs = schemasIn<typeof RS>('placement/reshaper');

export const PLACEMENT_ROUTES = routeTable([
  { path: '/', family: 'root', ops: { GET: { summary: 'Version document (no token needed)', ok: [200], returnsJson: true } } },
  // Berth's own: the OpenAPI document of this API
  { path: '/openapi.json', family: 'root', ops: { GET: { summary: 'This OpenAPI document', ok: [200], returnsJson: true } } },
  {
    path: '/resource_classes',
    family: 'resource-classes',
    ops: {
      GET: { summary: 'List resource classes', ok: [200], since: '1.2', returnsJson: true },
      POST: { summary: 'Create a custom resource class', ok: [201], since: '1.2', body: rc('postResourceClass') },
    },
  },
  {
    path: '/resource_classes/{name}',
    family: 'resource-classes',
    ops: {
      GET: { summary: 'Show a resource class', ok: [200], since: '1.2', returnsJson: true },
      PUT: { summary: 'Create a custom resource class unless it exists (201 created, 204 existed)', ok: [201, 204], since: '1.7' },
      DELETE: { summary: 'Delete a custom resource class (409 while in use)', ok: [204], since: '1.2' },
    },
  },
  {
    path: '/resource_providers',
    family: 'resource-providers',
    ops: {
      GET: { summary: 'List resource providers', ok: [200], query: rp('listProvidersQuery1_18'), returnsJson: true, forest: true },
      POST: { summary: 'Create a resource provider (returns it from 1.20)', ok: [200], body: rp('createProviderV1_14'), returnsJson: true },
    },
  },
  {
    path: '/resource_providers/{uuid}',
    family: 'resource-providers',
    ops: {
      GET: { summary: 'Show a resource provider', ok: [200], returnsJson: true },
      DELETE: { summary: 'Delete a resource provider (409 with children or allocations)', ok: [204] },
      // re-parenting reads the provider's subtree from the forest
      PUT: { summary: 'Rename / re-parent a resource provider', ok: [200], body: rp('updateProviderV1_14'), returnsJson: true, forest: true },
    },
  },
  {
    path: '/resource_providers/{uuid}/inventories',
    family: 'inventories',
    ops: {
      GET: { summary: "List a provider's inventories", ok: [200], returnsJson: true },
      POST: { summary: 'Add one inventory', ok: [201], body: inv('postInventory'), returnsJson: true },
      PUT: { summary: "Replace all of a provider's inventories (generation-guarded)", ok: [200], body: inv('putInventories'), returnsJson: true },
      DELETE: { summary: "Delete all of a provider's inventories (409 while in use)", ok: [204], since: '1.5' },
    },
  },
  {
    path: '/resource_providers/{uuid}/inventories/{resource_class}',
    family: 'inventories',
    ops: {
      GET: { summary: 'Show one inventory', ok: [200], returnsJson: true },
      PUT: { summary: 'Update one existing inventory (generation-guarded)', ok: [200], body: inv('putInventory'), returnsJson: true },
      DELETE: { summary: 'Delete one inventory (409 while in use)', ok: [204] },
    },
  },
  {
    path: '/resource_providers/{uuid}/usages',
    family: 'usages',
    ops: { GET: { summary: "A provider's usage per resource class", ok: [200], returnsJson: true } },
  },
  {
    path: '/resource_providers/{uuid}/aggregates',
    family: 'aggregates',
    ops: {
      GET: { summary: "A provider's aggregates", ok: [200], since: '1.1', returnsJson: true },
      PUT: {
        summary: "Replace a provider's aggregates (generation-guarded from 1.19)",
        ok: [200],
        since: '1.1',
        body: agg('putAggregatesV1_19'),
        returnsJson: true,
      },
    },
  },
  {
    path: '/resource_providers/{uuid}/allocations',
    family: 'allocations',
    ops: { GET: { summary: 'Allocations against a provider, by consumer', ok: [200], returnsJson: true } },
  },
  {
    path: '/allocations',
    family: 'allocations',
    ops: { POST: { summary: 'Set the allocations of several consumers atomically', ok: [204], since: '1.13', body: alloc('postAllocationsV1_38') } },
  },
  {
    path: '/allocations/{consumer_uuid}',
    family: 'allocations',
    ops: {
      GET: { summary: "A consumer's allocations", ok: [200], returnsJson: true },
      PUT: { summary: "Replace a consumer's allocations (consumer-generation-guarded from 1.28)", ok: [204], body: alloc('putAllocationsV1_38') },
      DELETE: { summary: "Delete a consumer's allocations", ok: [204] },
    },
  },
  {
    path: '/allocation_candidates',
    family: 'allocation-candidates',
    ops: {
      GET: {
        summary: 'Allocation candidates and provider summaries for a request',
        ok: [200],
        since: '1.10',
        query: ac('getCandidates1_36'),
        returnsJson: true,
        forest: true,
      },
    },
  },
  {
    path: '/traits',
    family: 'traits',
    // associated=true|false reads the forest
    ops: { GET: { summary: 'List traits', ok: [200], since: '1.6', query: tr('listTraitsQuery'), returnsJson: true, forest: true } },
  },
  {
    path: '/traits/{name}',
    family: 'traits',
    ops: {
      GET: { summary: 'Check a trait exists', ok: [204], since: '1.6' },
      PUT: { summary: 'Create a custom trait unless it exists (201 created, 204 existed)', ok: [201, 204], since: '1.6' },
      DELETE: { summary: 'Delete a custom trait (409 while in use)', ok: [204], since: '1.6' },
    },
  },
  {
    path: '/resource_providers/{uuid}/traits',
    family: 'traits',
    ops: {
      GET: { summary: "A provider's traits", ok: [200], since: '1.6', returnsJson: true },
      PUT: { summary: "Replace a provider's traits (generation-guarded)", ok: [200], since: '1.6', body: tr('setProviderTraits'), returnsJson: true },
      DELETE: { summary: "Remove all of a provider's traits", ok: [204], since: '1.6' },
    },
  },
  {
    path: '/usages',
    family: 'usages',
    ops: {
      GET: {
        summary: 'Usage of a project (and user), by consumer type from 1.38',
        ok: [200],
        since: '1.9',
        query: us('usagesQuery1_38'),
        returnsJson: true,
      },
    },
  },
  {
    path: '/reshaper',
    family: 'reshaper',
    ops: { POST: { summary: 'Move inventories and allocations atomically', ok: [204], since: '1.30', body: rs('reshapeV1_38') } },
  },
]);

/** The family whose Lambda also answers every unmatched path (API Gateway's $default route). */
export const PLACEMENT_DEFAULT_FAMILY = 'root';

export const PLACEMENT_FAMILIES = [...new Set(PLACEMENT_ROUTES.map((r) => r.family))];

/** Placement families that answer from the provider forest (and so load it when they start) */
export const PLACEMENT_FOREST_FAMILIES = forestFamilies(PLACEMENT_ROUTES);
