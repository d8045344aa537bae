/**
 * The bare-metal API's URL map, each route tagged with the resource-family Lambda
 * that serves it and each method with what it does. The one description of every
 * endpoint: cdk/ turns it into API Gateway routes, the local runtime routes with it,
 * the dispatcher answers 404/405 from it, and scripts/openapi-document.ts builds the
 * OpenAPI document from it. Specific paths come before templated ones
 * (/v1/nodes/detail before /v1/nodes/{node}). Schemas are named, not imported
 * (SchemaRef): every family's bundle holds this table. The query parameters of the
 * lists (the handlers' allowed-argument lists) and the small bodies the handlers check
 * argument by argument are written here as documentation.
 */
import { routeTable, schemasIn } from '../http/router.js';
import type * as NODES from '../../schemas/baremetal/nodes.js';
import type * as BMA from '../../schemas/baremetal/allocations.js';
import type * as BMT from '../../schemas/baremetal/traits.js';
import type * as RAID from '../../schemas/baremetal/raid.js';

const nodes = schemasIn<typeof NODES>('baremetal/nodes');
const bma = schemasIn<typeof BMA>('baremetal/allocations');
const bmt = schemasIn<typeof BMT>('baremetal/traits');
const raid = schemasIn<typeof RAID>('baremetal/raid');

const LIST = {
  marker: 'uuid of the last item of the previous page',
  limit: 'page size',
  sort_key: 'field to sort by',
  sort_dir: 'asc or desc',
};
const NODE_LIST = {
  chassis_uuid: 'only nodes of this chassis',
  instance_uuid: 'only the node with this instance',
  associated: 'true/false: nodes with/without an instance',
  maintenance: 'true/false',
  retired: 'true/false',
  provision_state: 'only nodes in this provision state',
  driver: 'only nodes of this driver',
  resource_class: 'only nodes of this resource class',
  fault: 'only nodes with this fault',
  conductor_group: 'only nodes of this conductor group',
  conductor: 'only nodes of this conductor',
  owner: 'only nodes owned by this project',
  lessee: 'only nodes leased to this project',
  project: 'nodes owned by or leased to this project',
  description_contains: 'substring of the description',
  shard: 'only nodes of these shards',
  sharded: 'true/false',
  ...LIST,
};
const FIELDS = { fields: 'comma-separated fields to return' };

export const BAREMETAL_ROUTES = routeTable([
  { path: '/', family: 'root', ops: { GET: { summary: 'Version document (no token needed)', ok: [200], returnsJson: true } } },
  // Berth's own: the OpenAPI document of this API
  { path: '/openapi.json', family: 'root', ops: { GET: { summary: 'This OpenAPI document', ok: [200], returnsJson: true } } },
  { path: '/v1', family: 'root', ops: { GET: { summary: 'API v1 document with the negotiated version', ok: [200], returnsJson: true } } },
  {
    path: '/v1/nodes',
    family: 'nodes',
    ops: {
      GET: { summary: 'List nodes', ok: [200], query: { ...NODE_LIST, ...FIELDS, detail: 'true: full records' }, returnsJson: true },
      POST: { summary: 'Enroll a node', ok: [201], body: nodes('createNode'), returnsJson: true },
    },
  },
  {
    path: '/v1/nodes/detail',
    family: 'nodes',
    ops: { GET: { summary: 'List nodes with every field', ok: [200], query: NODE_LIST, returnsJson: true } },
  },
  {
    path: '/v1/nodes/{node}',
    family: 'nodes',
    ops: {
      GET: { summary: 'Show a node (by uuid or name)', ok: [200], query: FIELDS, returnsJson: true },
      PATCH: {
        summary: 'Update a node (JSON Patch)',
        ok: [200],
        query: { reset_interfaces: 'true: reset interfaces to the new driver’s defaults' },
        body: { patchOf: nodes('NODE_PATCH_FIELDS') },
        returnsJson: true,
      },
      DELETE: { summary: 'Delete a node', ok: [204] },
    },
  },
  {
    path: '/v1/nodes/{node}/validate',
    family: 'nodes',
    ops: {
      GET: {
        summary: "Each driver interface's verdict on the node ({result, reason})",
        ok: [200],
        query: { node_uuid: 'validate this node instead (a UUID)' },
        returnsJson: true,
      },
    },
  },
  {
    path: '/v1/nodes/{node}/traits',
    family: 'node-traits',
    ops: {
      GET: { summary: "A node's traits", ok: [200], since: '1.37', returnsJson: true },
      PUT: { summary: "Replace a node's traits", ok: [204], since: '1.37', body: bmt('nodeTraitsBody') },
      DELETE: { summary: "Remove all of a node's traits", ok: [204], since: '1.37' },
    },
  },
  {
    path: '/v1/nodes/{node}/traits/{trait}',
    family: 'node-traits',
    ops: {
      PUT: { summary: 'Add one trait', ok: [204], since: '1.37' },
      DELETE: { summary: 'Remove one trait', ok: [204], since: '1.37' },
    },
  },
  {
    path: '/v1/nodes/{node}/states',
    family: 'node-states',
    ops: { GET: { summary: "A node's power and provision states", ok: [200], returnsJson: true } },
  },
  {
    path: '/v1/nodes/{node}/states/power',
    family: 'node-states',
    ops: {
      PUT: {
        summary: 'Change the power state (asynchronous)',
        ok: [202],
        body: {
          type: 'object',
          properties: {
            target: { type: 'string', enum: ['power on', 'power off', 'rebooting', 'soft power off', 'soft rebooting'] },
            timeout: { type: 'integer', minimum: 1 },
          },
          required: ['target'],
          additionalProperties: false,
        },
      },
    },
  },
  {
    path: '/v1/nodes/{node}/states/provision',
    family: 'node-states',
    ops: {
      PUT: {
        summary: 'Change the provision state (asynchronous: manage, provide, active, deleted, clean, …)',
        ok: [202],
        body: {
          type: 'object',
          properties: {
            target: { type: 'string' },
            configdrive: { type: ['string', 'object', 'null'] },
            clean_steps: { type: ['array', 'null'] },
            deploy_steps: { type: ['array', 'null'] },
            rescue_password: { type: 'string' },
            disable_ramdisk: { type: 'boolean' },
          },
          required: ['target'],
          additionalProperties: false,
        },
      },
    },
  },
  {
    path: '/v1/nodes/{node}/states/raid',
    family: 'node-states',
    ops: { PUT: { summary: "Set the node's target RAID configuration ({} clears it)", ok: [204], since: '1.12', body: raid('raidConfig') } },
  },
  {
    path: '/v1/nodes/{node}/maintenance',
    family: 'node-states',
    ops: {
      PUT: {
        summary: 'Put a node into maintenance',
        ok: [202],
        body: { type: 'object', properties: { reason: { type: 'string' } }, additionalProperties: false },
      },
      DELETE: { summary: 'Take a node out of maintenance', ok: [202] },
    },
  },
  {
    path: '/v1/nodes/{node}/vifs',
    family: 'node-vifs',
    ops: {
      GET: { summary: 'The VIFs attached to a node', ok: [200], since: '1.28', returnsJson: true },
      POST: { summary: 'Attach a VIF (kept on the node: Berth has no ports)', ok: [204], since: '1.28', body: raid('vifAttach') },
    },
  },
  { path: '/v1/nodes/{node}/vifs/{vif}', family: 'node-vifs', ops: { DELETE: { summary: 'Detach a VIF', ok: [204], since: '1.28' } } },
  {
    path: '/v1/nodes/{node}/allocation',
    family: 'allocations',
    ops: {
      GET: { summary: "The node's allocation", ok: [200], since: '1.52', query: FIELDS, returnsJson: true },
      DELETE: { summary: "Delete the node's allocation", ok: [204], since: '1.52' },
    },
  },
  {
    path: '/v1/drivers',
    family: 'drivers',
    ops: {
      GET: {
        summary: 'The enabled hardware types',
        ok: [200],
        query: {
          type: 'classic or dynamic (1.30)',
          detail: 'true: default and enabled interfaces (1.30)',
          fields: 'comma-separated fields to return (1.77)',
        },
        returnsJson: true,
      },
    },
  },
  {
    path: '/v1/drivers/{driver}',
    family: 'drivers',
    ops: {
      GET: {
        summary: 'A hardware type with its default and enabled interfaces',
        ok: [200],
        query: { fields: 'comma-separated fields to return (1.77)' },
        returnsJson: true,
      },
    },
  },
  {
    path: '/v1/drivers/{driver}/properties',
    family: 'drivers',
    ops: { GET: { summary: 'The driver_info properties a hardware type reads', ok: [200], returnsJson: true } },
  },
  {
    path: '/v1/allocations',
    family: 'allocations',
    ops: {
      GET: {
        summary: 'List allocations',
        ok: [200],
        since: '1.52',
        query: {
          node: 'uuid or name of the node',
          resource_class: 'only of this class',
          state: 'allocating, active or error',
          owner: 'only of this owner (1.60)',
          ...FIELDS,
          ...LIST,
        },
        returnsJson: true,
      },
      POST: {
        summary: 'Create an allocation (asynchronous: allocating → active or error)',
        ok: [201],
        since: '1.52',
        body: bma('ALLOCATION_DOC_JSON'),
        returnsJson: true,
      },
    },
  },
  {
    path: '/v1/allocations/{allocation}',
    family: 'allocations',
    ops: {
      GET: { summary: 'Show an allocation (by uuid or name)', ok: [200], since: '1.52', query: FIELDS, returnsJson: true },
      PATCH: {
        summary: 'Update an allocation (JSON Patch; 1.57)',
        ok: [200],
        since: '1.57',
        body: { patchOf: bma('ALLOCATION_PATCH_FIELDS') },
        returnsJson: true,
      },
      DELETE: { summary: 'Delete an allocation (frees its node)', ok: [204], since: '1.52' },
    },
  },
]);

/** The family whose Lambda also answers every unmatched path (API Gateway's $default route). */
export const BAREMETAL_DEFAULT_FAMILY = 'root';

export const BAREMETAL_FAMILIES = [...new Set(BAREMETAL_ROUTES.map((r) => r.family))];
