/**
 * The module-scope DynamoDB clients (one set per process / Lambda container).
 * DDB_ENDPOINT points them at DynamoDB Local. A leaf of the store: it imports nothing
 * else of it (what readers see of locked items is reads.ts's, above the intent protocol).
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
  /** reads see items as stored (no read filter): the intent protocol's own */
  plain: DynamoDBDocumentClient;
}

let pick: (() => Clients) | undefined;
let key = '';

/** what the answer of every read of the document client passes through (reads.ts installs it) */
type ReadFilter = (output: Record<string, unknown>) => Promise<void>;
let readFilter: ReadFilter | undefined;
const READS = new Set(['GetItemCommand', 'QueryCommand', 'ScanCommand', 'BatchGetItemCommand']);

/**
 * Have every read of the document client (GetItem, Query, Scan, BatchGetItem) answer
 * what `filter` makes of its output. reads.ts installs the one filter there is — readers
 * see changes larger than one transaction whole — when it loads, and ddb() is read
 * through only from there. This module knows nothing of locks: it is the store's leaf.
 */
export function filterDocumentReads(filter: ReadFilter): void {
  readFilter = filter;
}

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

/**
 * The read filter's place in the document client's middleware (which is the raw
 * client's: the two share one stack), set when the client is built, first of those added
 * at `initialize` — where it always was. (The raw client's reads pass through it too,
 * their items as attribute values; the plain client's do not.)
 */
function filterReads(doc: DynamoDBDocumentClient): DynamoDBDocumentClient {
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      if (readFilter && READS.has(String(context.commandName))) await readFilter(out.output as unknown as Record<string, unknown>);
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
      doc: filterReads(DynamoDBDocumentClient.from(raw, DOC_OPTIONS)),
      plain: DynamoDBDocumentClient.from(trace(rawClient()), DOC_OPTIONS),
    };
  });
  return pick();
}

/**
 * The document client, on the raw client's stack. The store reads through it only as
 * reads.ts ddb(), which sees changes larger than one transaction whole; the layers below
 * that (commit.ts, batch.ts) write through it here.
 */
export function ddbDoc(): DynamoDBDocumentClient {
  return build().doc;
}

export function ddbRaw(): DynamoDBClient {
  return build().raw;
}

/** A client whose reads show items as stored, locks and placeholders included: the intent protocol's own (intents/). */
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
