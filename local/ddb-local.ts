/**
 * DynamoDB Local (AWS's jar, fetched by local/fetch-dynamodb-local.mjs) as a child
 * process: start it, wait until it answers, create the table, stop it with its parent.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  PutItemCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTableInput, STREAM_VIEW_TYPE, TTL_ATTRIBUTE } from '../functions/store/ddb/table.js';
import { LAYOUT, LAYOUT_META } from '../functions/core/layout.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const JAR_DIR = process.env.DYNAMODB_LOCAL_DIR ?? join(ROOT, '.cache', 'dynamodb-local');

export interface DdbLocal {
  endpoint: string;
  port: number;
  stop(): Promise<void>;
  child: ChildProcess;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export function localClient(endpoint: string, region = 'local'): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
}

export interface DdbLocalOptions {
  port?: number;
  /** on disk here; in memory (-inMemory) without */
  dataDir?: string;
  heapMb?: number;
  /** more JVM options (before -jar) */
  jvm?: string[];
  /** more DynamoDB Local options (-optimizeDbBeforeStartup, -delayTransientStatuses, ...) */
  args?: string[];
}

export async function startDynamoDbLocal(opts: DdbLocalOptions = {}): Promise<DdbLocal> {
  if (!existsSync(join(JAR_DIR, 'DynamoDBLocal.jar'))) {
    throw new Error(`DynamoDB Local not found in ${JAR_DIR}: run 'npm install' (or node local/fetch-dynamodb-local.mjs)`);
  }
  const port = opts.port ?? (await freePort());
  const args = [
    `-Xmx${opts.heapMb ?? 1024}m`,
    ...(opts.jvm ?? []),
    `-Djava.library.path=${join(JAR_DIR, 'DynamoDBLocal_lib')}`,
    '-jar',
    join(JAR_DIR, 'DynamoDBLocal.jar'),
    '-port',
    String(port),
    '-sharedDb',
    '-disableTelemetry',
  ];
  if (opts.dataDir) {
    mkdirSync(opts.dataDir, { recursive: true });
    args.push('-dbPath', resolve(opts.dataDir));
  } else {
    args.push('-inMemory');
  }
  args.push(...(opts.args ?? []));
  // DynamoDB Local writes dynamodb-local-metadata.json into its working directory: keep
  // it out of the repository (telemetry is off: -disableTelemetry)
  const cwd = join(tmpdir(), 'berth-dynamodb-local');
  mkdirSync(cwd, { recursive: true });
  const child = spawn(process.env.JAVA ?? 'java', args, { stdio: ['ignore', 'pipe', 'pipe'], cwd });
  let output = '';
  child.stdout?.on('data', (d) => (output += String(d)));
  child.stderr?.on('data', (d) => (output += String(d)));
  const endpoint = `http://127.0.0.1:${port}`;
  const client = localClient(endpoint);
  const deadline = Date.now() + 60_000;
  let exited = false;
  child.once('exit', () => (exited = true));
  for (;;) {
    if (exited) throw new Error(`DynamoDB Local exited during startup:\n${output}`);
    try {
      await client.send(new ListTablesCommand({}));
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`DynamoDB Local did not answer on ${endpoint} within 60 s:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  client.destroy();
  const stop = () =>
    new Promise<void>((resolve) => {
      if (exited || child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 3000).unref();
    });
  return { endpoint, port, stop, child };
}

/**
 * Create the table (and TTL) unless it exists; `region` must be the handlers' (LocalStack
 * keeps tables per region). `stream: false`: no stream unless the table has one (nothing
 * reads it without the change feed's processor; local/feed.ts).
 */
export async function ensureTable(endpoint: string, tableName: string, region = 'local', opts: { stream?: boolean } = {}): Promise<void> {
  const stream = opts.stream !== false;
  const client = localClient(endpoint, region);
  try {
    try {
      const d = await client.send(new DescribeTableCommand({ TableName: tableName }));
      // a table made before the change feed: its stream is turned on (the feed reads it)
      if (stream && !d.Table?.StreamSpecification?.StreamEnabled) {
        await client
          .send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: { StreamEnabled: true, StreamViewType: STREAM_VIEW_TYPE } }))
          .catch(() => undefined);
      }
      return;
    } catch (e) {
      if ((e as Error).name !== 'ResourceNotFoundException') throw e;
    }
    await client.send(new CreateTableCommand(createTableInput(tableName, { stream })));
    // DynamoDB Local creates at once; LocalStack and AWS take a moment
    for (let i = 0; i < 600; i++) {
      const d = await client.send(new DescribeTableCommand({ TableName: tableName }));
      if (d.Table?.TableStatus === 'ACTIVE' && (d.Table.GlobalSecondaryIndexes ?? []).every((g) => g.IndexStatus === 'ACTIVE')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    try {
      await client.send(
        new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { Enabled: true, AttributeName: TTL_ATTRIBUTE } }),
      );
    } catch {
      // older DynamoDB Local builds do not implement TTL; expiry is an optimisation only
    }
    // a new table holds this release's layout (functions/store/layout/state.ts)
    await client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: {
          pk: { S: 'META' },
          sk: { S: LAYOUT_META },
          version: { N: String(LAYOUT) },
          phase: { S: 'complete' },
          since: { S: new Date().toISOString() },
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } finally {
    client.destroy();
  }
}
