/**
 * The change feed's event shapes as JSON Schema (2020-12), version 1: one document per
 * detail-type (schemas/events/v1/<detail-type>.json, written by `npm run event-schemas`
 * from this file; a unit test fails while they are stale, and the feed's tests check
 * every event they see against them). Each document describes an event's `detail`; the
 * envelope is EventBridge's (`source`, `detail-type`, `time`, …). Documents are
 * self-contained (no $ref), so any validator reads them as they are.
 *
 * A new version of a shape is a new directory (v2/) beside this one: consumers that
 * validate pin a version, and `detail.version` says which an event follows.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { iterErrors } from '../../functions/core/compat/jsonschema-keywords.js';
import { EVENT_TYPES, EVENT_VERSION, type EventSource } from '../../functions/core/feed/event-envelope.js';
import { ALLOCATION_PAYLOAD_FIELDS, NODE_PAYLOAD_FIELDS, payloadOf } from '../../functions/core/feed/ironic-events.js';

type Schema = Record<string, unknown>;

const str: Schema = { type: 'string' };
const nullable = (s: Schema): Schema => ({ anyOf: [s, { type: 'null' }] });
const int: Schema = { type: 'integer' };
const strings: Schema = { type: 'array', items: str };
const obj = (properties: Record<string, Schema>, required: string[] = Object.keys(properties), extra = false): Schema => ({
  type: 'object',
  properties,
  required,
  additionalProperties: extra,
});
const mapOf = (values: Schema): Schema => ({ type: 'object', additionalProperties: values });

const ID = {
  type: 'string',
  pattern: '^[0-9]{16}#[0-9a-f]{16}$',
  description: 'the change id: de-duplicate on it; per provider and per consumer ids grow in commit order',
};
const TIME = { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$' };

const INVENTORY = obj(
  {
    total: int,
    reserved: int,
    min_unit: int,
    max_unit: int,
    step_size: int,
    allocation_ratio: { type: 'number' },
  },
  ['total'],
);
const PROVIDER = obj(
  {
    name: str,
    parent: nullable(str),
    root: str,
    generation: int,
    inventories: mapOf(INVENTORY),
    traits: strings,
    aggregates: strings,
  },
  ['generation'],
);
const CONSUMER = obj({
  project: str,
  user: str,
  type: nullable(str),
  generation: int,
  allocations: mapOf(mapOf(int)),
});
const CONSUMERS = {
  type: 'array',
  items: obj({
    consumer_uuid: str,
    project_id: nullable(str),
    user_id: nullable(str),
    consumer_type: nullable(str),
    generation: nullable(int),
    previous: nullable(ID),
  }),
};
const PROVIDER_CHANGES = { type: 'array', items: obj({ uuid: str, before: nullable(PROVIDER), after: nullable(PROVIDER) }) };
/** a bare-metal node or allocation: after whole, before the fields that changed (whole when deleted) */
const RECORD: Schema = { type: 'object' };
const PLACEMENT_SIDE = obj(
  {
    resource_providers: PROVIDER_CHANGES,
    consumers: CONSUMERS,
    consumer_changes: {
      type: 'array',
      items: obj({ uuid: str, prev: nullable(ID), before: nullable(CONSUMER), after: nullable(CONSUMER) }),
    },
  },
  ['resource_providers', 'consumers', 'consumer_changes'],
);

function envelope(type: string, view: Schema, more: Record<string, Schema>, required: string[]): Schema {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `https://berth.invalid/schemas/events/v${EVENT_VERSION}/${type}.json`,
    title: type,
    description: `The detail of a Berth change-feed event of detail-type ${type} (docs/consistency.md, "The change feed").`,
    ...obj(
      {
        version: { const: EVENT_VERSION },
        id: ID,
        time: TIME,
        type: { const: type },
        generation: nullable(int),
        project_id: nullable(str),
        user_id: nullable(str),
        subjects: strings,
        before: mapOf(nullable(view)),
        after: mapOf(nullable(view)),
        truncated: { const: true },
        ...more,
      },
      ['version', 'id', 'time', 'type', 'generation', 'project_id', 'user_id', 'subjects', 'before', 'after', ...required],
    ),
  };
}

function ironic(type: string): Record<string, Schema> {
  const p = payloadOf(type);
  const base: readonly string[] = type.startsWith('baremetal.allocation.') ? ALLOCATION_PAYLOAD_FIELDS : [...NODE_PAYLOAD_FIELDS];
  const fields = [...base, ...p.extra];
  return {
    priority: { enum: ['info', 'error'] },
    event_type: { const: type },
    publisher_id: { type: 'string', pattern: '^ironic-(api|conductor)\\.' },
    timestamp: str,
    message_id: { type: 'string', pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' },
    payload: obj({
      'ironic_object.namespace': { const: 'ironic' },
      'ironic_object.name': { const: p.name },
      'ironic_object.version': { const: p.version },
      'ironic_object.data': { ...obj(Object.fromEntries(fields.map((f) => [f, {}])), fields), additionalProperties: false },
    }),
    placement: PLACEMENT_SIDE,
  };
}

/** The schema document of one detail-type. */
export function eventSchema(source: EventSource, type: string): Schema {
  if (source === 'berth.baremetal') {
    return envelope(type, RECORD, ironic(type), ['priority', 'event_type', 'publisher_id', 'timestamp', 'message_id', 'payload']);
  }
  if (source === 'berth.internal') return envelope(type, RECORD, { note: str, placement: PLACEMENT_SIDE }, ['note']);
  if (type === 'consumer.allocations.update') {
    return envelope(
      type,
      CONSUMER,
      { action: { enum: ['set', 'delete', 'reshape', 'import', 'migrate'] }, consumers: CONSUMERS, resource_providers: PROVIDER_CHANGES },
      ['action', 'consumers'],
    );
  }
  if (type.startsWith('resource_class.') || type.startsWith('trait.')) return envelope(type, obj({ name: str }), {}, []);
  return envelope(type, PROVIDER, { consumers: CONSUMERS }, []);
}

/** every document: file name (detail-type) → schema */
export function eventSchemas(): Map<string, Schema> {
  const out = new Map<string, Schema>();
  for (const [source, types] of Object.entries(EVENT_TYPES) as Array<[EventSource, readonly string[]]>) {
    for (const t of types) out.set(t, eventSchema(source, t));
  }
  return out;
}

/** where the documents of this version live (relative to the repository) */
export const EVENT_SCHEMA_DIR = `schemas/events/v${EVENT_VERSION}`;

/** a document as it is written: sorted keys are not needed, two-space JSON and a newline */
export const renderSchema = (s: Schema) => `${JSON.stringify(s, null, 2)}\n`;

const documents = new Map<string, Schema>();

/**
 * What is wrong with an event (EventBridge's envelope: `source`, `detail-type`, `detail`)
 * against the written schema document of its detail-type; empty when it conforms. The
 * documents are read from disk, as a consumer would read them.
 */
export function eventProblems(e: { source: string; 'detail-type': string; detail: unknown }, root: string): string[] {
  const type = e['detail-type'];
  const known = (EVENT_TYPES as Record<string, readonly string[]>)[e.source];
  if (!known?.includes(type)) return [`${e.source} ${type}: no such detail-type`];
  let doc = documents.get(type);
  if (!doc) {
    doc = JSON.parse(readFileSync(join(root, EVENT_SCHEMA_DIR, `${type}.json`), 'utf8')) as Schema;
    documents.set(type, doc);
  }
  return iterErrors(e.detail, doc).map((x) => `${type} ${x.path.join('.')}: ${x.message}`);
}
