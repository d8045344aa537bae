/**
 * Integration harness: a fresh table in the shared DynamoDB Local, the real Placement
 * handlers behind the real local HTTP adapter on a random port, and a small client.
 */
import { inject } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { ensureTable } from '../../local/ddb-local.js';
import { closeServers } from '../../local/servers.js';
import type { RunningStack } from '../../local/start.js';
import { join } from 'node:path';

export interface Api {
  url: string;
  req(
    method: string,
    path: string,
    opts?: { body?: unknown; raw?: string; headers?: Record<string, string>; version?: string; token?: string },
  ): Promise<Res>;
  close(): Promise<void>;
}

export interface Res {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** `stream`: the table gets its stream (a test that runs the change feed's processor on it) */
export async function useTable(env: Record<string, string> = {}, opts: { stream?: boolean } = {}): Promise<string> {
  const endpoint = inject('ddbEndpoint');
  const table = `t_${randomUUID().replace(/-/g, '')}`;
  process.env.DDB_ENDPOINT = endpoint;
  process.env.TABLE_NAME = table;
  process.env.AWS_REGION = 'local';
  Object.assign(process.env, env);
  // no stream unless asked: nothing else reads it (and DynamoDB Local pays for it on one thread)
  await ensureTable(endpoint, table, 'local', { stream: !!opts.stream });
  const { resetConfig } = await import('../../functions/config.js');
  resetConfig();
  const { snapshot } = await import('../../functions/store/placement/snapshot.js');
  snapshot().reset();
  return table;
}

/**
 * The stack as `npm start -- --containers K` runs it: K child processes (each like a
 * Lambda container, its own provider snapshot) behind a round-robin front, over a fresh
 * table in the shared DynamoDB Local. What one container writes, the next request — in
 * another container — must see (read-your-writes across containers).
 */
export async function startContainers(k = 2, env: Record<string, string> = {}): Promise<Api & { baremetalUrl: string }> {
  const stack = await startLocalStack({ containers: k, containerEnv: env });
  return { ...client(stack.placementUrl, () => stack.stop()), baremetalUrl: stack.baremetalUrl };
}

/**
 * The local stack (local/start.ts) on a table of the shared DynamoDB Local: a new one,
 * or `table` (made first if missing, as `before` leaves it), on ports of its own, with
 * no maintenance timer or dashboard; `options` as `npm start` takes them.
 */
export async function startLocalStack(
  options: Partial<StackOptions> = {},
  opts: { table?: string; before?: () => Promise<void> } = {},
): Promise<RunningStack> {
  const endpoint = inject('ddbEndpoint');
  const table = opts.table ?? `t_${randomUUID().replace(/-/g, '')}`;
  // the change feed's replay of these tests (test/integration/feed/): every stack's events to
  // <dir>/<table>.jsonl, optionally through the fault injector
  const eventsDir = process.env.BERTH_TEST_EVENTS_DIR;
  const feed = eventsDir
    ? {
        eventsFile: join(eventsDir, `${table}.jsonl`),
        ddbFaults: process.env.BERTH_TEST_DDB_FAULTS
          ? (await import('../../local/ddb-faults.js')).parseFaults(process.env.BERTH_TEST_DDB_FAULTS)
          : undefined,
      }
    : {};
  const stack: StackOptions = {
    fresh: false,
    ddbEndpoint: endpoint,
    tableName: table,
    placementPort: 0,
    baremetalPort: 0,
    host: '127.0.0.1',
    maintenanceInterval: 0,
    dataDir: '',
    dashboardPort: null,
    quietContainers: true,
    ...options,
    ...feed,
  };
  // made here, before `before` fills it, as startStack would make it: the stream only with an events file
  await ensureTable(endpoint, table, 'local', { stream: !!stack.eventsFile });
  await opts.before?.();
  const { startStack } = await import('../../local/start.js');
  return startStack(stack);
}

type StackOptions = Parameters<typeof import('../../local/start.js').startStack>[0];

export async function startPlacement(env: Record<string, string> = {}, opts: { stream?: boolean } = {}): Promise<Api> {
  await useTable(env, opts);
  return servePlacementHere();
}

/** The Placement API on the table this file already uses (e.g. beside startBaremetal's). */
export async function servePlacementHere(): Promise<Api> {
  const { servePlacement } = await import('../../local/apis.js');
  const server: Server = await servePlacement(0);
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return client(url, async () => {
    await closeServers([server]);
  });
}

export function client(url: string, close: () => Promise<void>): Api {
  return {
    url,
    async req(method, path, opts = {}) {
      const headers: Record<string, string> = {
        'x-auth-token': opts.token ?? 'admin',
        accept: 'application/json',
        'openstack-api-version': `placement ${opts.version ?? 'latest'}`,
        ...(opts.body !== undefined || opts.raw !== undefined ? { 'content-type': 'application/json' } : {}),
        ...opts.headers,
      };
      for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
      const r = await fetch(url + path, {
        method,
        headers,
        body: opts.raw ?? (opts.body !== undefined ? JSON.stringify(opts.body) : undefined),
      });
      const text = await r.text();
      let json: any;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      return { status: r.status, headers: r.headers, text, json };
    },
    close,
  };
}
