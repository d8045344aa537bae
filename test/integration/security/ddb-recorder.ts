/**
 * Records every DynamoDB request the real handlers make, attributed to the Lambda
 * (resource family) serving the request, as IAM sees it: one (action, index, partition
 * key) per item — a TransactWriteItems is authorised as its Put/Update/Delete/
 * ConditionCheck items, a BatchGetItem per key. The IAM test checks each one against
 * the family's grant in cdk/lib/permissions.ts, so the policy the stack deploys is
 * proven to cover what the code does (and nothing is granted that is not listed).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Server } from 'node:http';
import { serve } from '../../../local/http-adapter.js';
import type { LambdaHandler } from '../../../functions/http/family.js';
import { allows, type AccessRule } from '../../../cdk/lib/permissions.js';

export interface DdbCall {
  family: string;
  action: string;
  index?: string;
  /** partition key value (the index's for an index Query); undefined for Scan */
  pk?: string;
}

const current = new AsyncLocalStorage<string>();
export const calls: DdbCall[] = [];
const installed = new WeakSet<object>();

type AV = Record<string, { S?: string }>;
const pkOf = (item: AV | undefined) => item?.pk?.S;

function record(family: string, command: string, input: any) {
  const push = (action: string, pk?: string, index?: string): void => {
    calls.push({ family, action, pk, index });
  };
  switch (command) {
    case 'GetItemCommand':
      return push('dynamodb:GetItem', pkOf(input.Key));
    case 'PutItemCommand':
      return push('dynamodb:PutItem', pkOf(input.Item));
    case 'UpdateItemCommand':
      return push('dynamodb:UpdateItem', pkOf(input.Key));
    case 'DeleteItemCommand':
      return push('dynamodb:DeleteItem', pkOf(input.Key));
    case 'QueryCommand': {
      const expr = String(input.KeyConditionExpression ?? '');
      const m = /(#?\w+)\s*=\s*(:\w+)/.exec(expr);
      const pk = m ? input.ExpressionAttributeValues?.[m[2]!]?.S : undefined;
      return push('dynamodb:Query', pk, input.IndexName);
    }
    case 'ScanCommand':
      return push('dynamodb:Scan', undefined, input.IndexName);
    case 'BatchGetItemCommand':
      for (const t of Object.values(input.RequestItems ?? {}) as Array<{ Keys: AV[] }>)
        for (const k of t.Keys) push('dynamodb:BatchGetItem', pkOf(k));
      return;
    case 'BatchWriteItemCommand':
      for (const reqs of Object.values(input.RequestItems ?? {}) as Array<Array<{ PutRequest?: { Item: AV }; DeleteRequest?: { Key: AV } }>>) {
        for (const r of reqs) push('dynamodb:BatchWriteItem', pkOf(r.PutRequest?.Item ?? r.DeleteRequest?.Key));
      }
      return;
    case 'TransactWriteItemsCommand':
      for (const it of input.TransactItems ?? []) {
        if (it.Put) push('dynamodb:PutItem', pkOf(it.Put.Item));
        if (it.Update) push('dynamodb:UpdateItem', pkOf(it.Update.Key));
        if (it.Delete) push('dynamodb:DeleteItem', pkOf(it.Delete.Key));
        if (it.ConditionCheck) push('dynamodb:ConditionCheckItem', pkOf(it.ConditionCheck.Key));
      }
      return;
    case 'TransactGetItemsCommand':
      for (const it of input.TransactItems ?? []) push('dynamodb:GetItem', pkOf(it.Get?.Key));
      return;
    default:
      return push(`dynamodb:${command.replace(/Command$/, '')}`);
  }
}

/** Install the recorder on the store's DynamoDB client (built for the current endpoint: call after useTable). */
export async function installRecorder(): Promise<void> {
  const { ddbCallStacks } = await import('../../../functions/store/ddb/client.js');
  // every client: the plain one carries the intent protocol's own calls (store/ddb/intents/)
  for (const client of ddbCallStacks()) {
    if (installed.has(client)) continue;
    installed.add(client);
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const family = current.getStore() ?? '(outside a request)';
        record(family, String(context.commandName), args.input);
        return next(args);
      },
      { step: 'build', name: 'berthIamRecorder', override: true },
    );
  }
}

/** Serve an API whose handlers run inside the recorder's family context. */
export async function serveRecorded(
  name: string,
  routes: Parameters<typeof serve>[0]['routes'],
  handlers: Record<string, LambdaHandler>,
  defaultFamily: string,
): Promise<{ server: Server; url: string }> {
  await installRecorder();
  const wrapped = Object.fromEntries(
    Object.entries(handlers).map(([family, h]) => [family, ((event, ctx) => current.run(family, () => h(event, ctx))) as LambdaHandler]),
  );
  const server = await serve({ name, routes, handlers: wrapped, defaultFamily }, 0);
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

/** Run `fn` as if inside a Lambda of this family (for steps and scheduled tasks). */
export function asFamily<T>(family: string, fn: () => Promise<T>): Promise<T> {
  return current.run(family, fn);
}

/** Recorded requests a family's grant does not allow, summarised (family action@index key-prefix). */
export function denied(recorded: DdbCall[], grants: Record<string, AccessRule[]>): string[] {
  const out = new Set<string>();
  for (const c of recorded) {
    const rules = grants[c.family];
    if (!rules || !allows(rules, c.action, c.pk, c.index))
      out.add(`${c.family} ${c.action}${c.index ? `@${c.index}` : ''} ${c.pk?.replace(/#.*/, '#…') ?? '(no key)'}`);
  }
  return [...out].sort();
}
