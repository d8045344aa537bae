/**
 * Query schemas of GET /allocation_candidates (placement/schemas/allocation_candidate.py),
 * one per microversion where they change. Key order follows Placement's dicts so that
 * Python jsonschema's error selection (and therefore the message) is the same.
 * From 1.25 the group keys are patternProperties, which zod cannot express: those
 * schemas are attached with exact().
 */
import * as z from 'zod';
import { exact } from '../json-schema.js';

const GROUP_PAT = '[1-9][0-9]*';
const GROUP_PAT_1_33 = '[a-zA-Z0-9_-]{1,64}';

const LIMIT_JSON = { type: ['integer', 'string'], pattern: '^[1-9][0-9]*$', minimum: 1, minLength: 1 };
const STRING_LIST_JSON = { type: ['string'] };

/** limit: "A query parameter is always a string in webOb, but we'll handle integer here as well." */
const limit = exact(z.union([z.int(), z.string()]), LIMIT_JSON);
const stringParam = () => exact(z.string(), STRING_LIST_JSON);

export const getCandidates1_10 = z.strictObject({ resources: z.string() });
export const getCandidates1_16 = z.strictObject({ resources: z.string(), limit: limit.optional() });
export const getCandidates1_17 = z.strictObject({ resources: z.string(), limit: limit.optional(), required: stringParam().optional() });
export const getCandidates1_21 = z.strictObject({
  resources: z.string(),
  limit: limit.optional(),
  required: stringParam().optional(),
  member_of: stringParam().optional(),
});

/** a query dict validated by the patternProperties schemas (1.25+) */
const groupedQuery = () => z.record(z.string(), z.string());

function grouped(pattern: string, prefixes: string[], extra: Record<string, unknown>) {
  const patternProperties: Record<string, unknown> = {};
  for (const p of prefixes) patternProperties[`^${p}(${pattern})?$`] = { type: 'string' };
  return {
    type: 'object',
    properties: { limit: LIMIT_JSON, group_policy: { type: 'string', enum: ['none', 'isolate'] }, ...extra },
    additionalProperties: false,
    patternProperties,
  };
}

const GROUP_KEYS_1_25 = ['resources', 'required', 'member_of'];
const GROUP_KEYS_1_31 = [...GROUP_KEYS_1_25, 'in_tree'];

export const getCandidates1_25 = exact(groupedQuery(), grouped(GROUP_PAT, GROUP_KEYS_1_25, {}));
export const getCandidates1_31 = exact(groupedQuery(), grouped(GROUP_PAT, GROUP_KEYS_1_31, {}));
export const getCandidates1_33 = exact(groupedQuery(), grouped(GROUP_PAT_1_33, GROUP_KEYS_1_31, {}));
export const getCandidates1_35 = exact(groupedQuery(), grouped(GROUP_PAT_1_33, GROUP_KEYS_1_31, { root_required: STRING_LIST_JSON }));
export const getCandidates1_36 = exact(
  groupedQuery(),
  grouped(GROUP_PAT_1_33, GROUP_KEYS_1_31, { root_required: STRING_LIST_JSON, same_subtree: STRING_LIST_JSON }),
);

/** allocation_candidate._GET_SCHEMA_MICROVERSIONS, newest first */
export const GET_SCHEMAS: ReadonlyArray<readonly [number, number, z.ZodType]> = [
  [1, 36, getCandidates1_36],
  [1, 35, getCandidates1_35],
  [1, 33, getCandidates1_33],
  [1, 31, getCandidates1_31],
  [1, 25, getCandidates1_25],
  [1, 21, getCandidates1_21],
  [1, 17, getCandidates1_17],
  [1, 16, getCandidates1_16],
  [1, 10, getCandidates1_10],
];
