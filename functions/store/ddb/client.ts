/**
 * The module-scope DynamoDB document client (one per process / Lambda container).
 * DDB_ENDPOINT points it at DynamoDB Local.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config.js';
import { tracedInInvocations } from '../../observability/powertools.js';

/**
 * An item as the document client returns it: an untyped document. Each store module's
 * *FromItem() gives it a type; nothing outside the store sees an Item.
 */
// biome-ignore lint/suspicious/noExplicitAny: DynamoDB items are untyped documents until *FromItem() reads them
export type Item = Record<string, any>;

interface Clients {
  raw: DynamoDBClient;
  doc: DynamoDBDocumentClient;
  /** reads see items as stored (no lock middleware): the intent protocol's own */
  plain: DynamoDBDocumentClient;
}

let pick: (() => Clients) | undefined;
let key = '';

/** the attribute a change larger than one transaction locks items with (intents.ts LOCK) */
const LOCK = 'lk';
const READS = new Set(['GetItemCommand', 'QueryCommand', 'ScanCommand', 'BatchGetItemCommand']);

function rawClient() {
  const cfg = config();
  return new DynamoDBClient({
    region: cfg.region,
    ...(cfg.ddbEndpoint ? { endpoint: cfg.ddbEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    maxAttempts: 3,
    // In AWS every call is bounded (3 attempts x 1.5 s), so a request never waits long on
    // one stuck call; a write that commits late is announced again in the change log
    // (tx.ts LateCommit), whatever the bound. DynamoDB Local queues transactions one at a
    // time, so locally only a generous bound applies.
    requestHandler: { requestTimeout: cfg.ddbRequestTimeoutMs, connectionTimeout: Math.min(cfg.ddbRequestTimeoutMs, 3000) },
  });
}

const DOC_OPTIONS = {
  marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false },
  unmarshallOptions: { wrapNumbers: false },
};

/** every item a read answered with (GetItem, Query, Scan, BatchGetItem) */
function itemsOf(output: Record<string, unknown>): Item[] {
  const out: Item[] = [];
  if (output.Item) out.push(output.Item as Item);
  if (Array.isArray(output.Items)) out.push(...(output.Items as Item[]));
  for (const list of Object.values((output.Responses ?? {}) as Record<string, Item[]>)) out.push(...list);
  return out;
}

/** replace every locked item of a read's answer by what readers see of it (intents.ts lockedViews); gone ones leave the lists */
function unlocked(output: Record<string, unknown>, views: Map<Item, Item | undefined>): void {
  const view = (it: Item) => (views.has(it) ? views.get(it) : it);
  if (output.Item) {
    const v = view(output.Item as Item);
    if (v) output.Item = v;
    else delete output.Item;
  }
  const clean = (list: Item[]) => list.map(view).filter((it): it is Item => it !== undefined);
  if (Array.isArray(output.Items)) {
    output.Items = clean(output.Items as Item[]);
    if (typeof output.Count === 'number') output.Count = (output.Items as Item[]).length;
  }
  const responses = output.Responses as Record<string, Item[]> | undefined;
  if (responses) for (const t of Object.keys(responses)) responses[t] = clean(responses[t]!);
}

/**
 * Every read of the document client sees changes larger than one transaction all or
 * nothing (intents.ts): an item locked by one that committed reads as the change leaves
 * it, one locked by a change not committed as it was. (The raw client's reads — the table
 * export — and the plain client's see items as stored.)
 */
function seeLocksWhole(doc: DynamoDBDocumentClient): DynamoDBDocumentClient {
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      if (!READS.has(String(context.commandName))) return out;
      const output = out.output as unknown as Record<string, unknown>;
      const locked = itemsOf(output).filter((it) => typeof it[LOCK] === 'string');
      if (!locked.length) return out;
      const { lockedViews } = await import('./intents.js');
      unlocked(output, await lockedViews(locked));
      return out;
    },
    { step: 'initialize', name: 'berthIntentLocks' },
  );
  return doc;
}

function build(): Clients {
  const cfg = config();
  const k = `${cfg.ddbEndpoint}|${cfg.region}`;
  if (pick && k === key) return pick();
  key = k;
  // X-Ray subsegments for the calls made inside an invocation (observability/powertools.ts)
  pick = tracedInInvocations((trace) => {
    const raw = trace(rawClient());
    return {
      raw,
      doc: seeLocksWhole(DynamoDBDocumentClient.from(raw, DOC_OPTIONS)),
      plain: DynamoDBDocumentClient.from(trace(rawClient()), DOC_OPTIONS),
    };
  });
  return pick();
}

export function ddb(): DynamoDBDocumentClient {
  return build().doc;
}

export function ddbRaw(): DynamoDBClient {
  return build().raw;
}

/** A client whose reads show items as stored, locks and placeholders included: the intent protocol's own (intents.ts). */
export function ddbPlain(): DynamoDBDocumentClient {
  return build().plain;
}

/**
 * The SDK clients whose middleware stacks every call passes through: the raw client's
 * (shared by the document client) and the plain client's. A tool that watches every
 * call (the local attribution, the IAM recorder) installs itself on each.
 */
export function ddbCallStacks(): Array<{ middlewareStack: DynamoDBClient['middlewareStack'] }> {
  const c = build();
  return [c.raw, c.plain];
}

export function tableName(): string {
  return config().tableName;
}
