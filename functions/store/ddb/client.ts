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
}

let pick: (() => Clients) | undefined;
let key = '';

function build(): Clients {
  const cfg = config();
  const k = `${cfg.ddbEndpoint}|${cfg.region}`;
  if (pick && k === key) return pick();
  key = k;
  // X-Ray subsegments for the calls made inside an invocation (observability/powertools.ts)
  pick = tracedInInvocations((trace) => {
    const raw = trace(
      new DynamoDBClient({
        region: cfg.region,
        ...(cfg.ddbEndpoint ? { endpoint: cfg.ddbEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
        maxAttempts: 3,
        // In AWS every call is bounded (3 attempts x 1.5 s), so a request never waits long on
        // one stuck call; a write that commits late is announced again in the change log
        // (tx.ts LateCommit), whatever the bound. DynamoDB Local queues transactions one at a
        // time, so locally only a generous bound applies.
        requestHandler: { requestTimeout: cfg.ddbRequestTimeoutMs, connectionTimeout: Math.min(cfg.ddbRequestTimeoutMs, 3000) },
      }),
    );
    const doc = DynamoDBDocumentClient.from(raw, {
      marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false },
      unmarshallOptions: { wrapNumbers: false },
    });
    return { raw, doc };
  });
  return pick();
}

export function ddb(): DynamoDBDocumentClient {
  return build().doc;
}

export function ddbRaw(): DynamoDBClient {
  return build().raw;
}

export function tableName(): string {
  return config().tableName;
}
