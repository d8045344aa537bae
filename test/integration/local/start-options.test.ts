/**
 * `npm start` against a DynamoDB it did not start: a second DynamoDB Local, started
 * here by hand, is used through --ddb-endpoint/--table (the table is created in it, no
 * jar is started, the fault injector can sit in between); --ddb-port on that busy port
 * is refused with a clear error; DynamoDB Local writes nothing into the repository.
 */
import { DescribeTableCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localClient, startDynamoDbLocal, type DdbLocal } from '../../../local/ddb-local.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');

let second: DdbLocal;
beforeAll(async () => {
  second = await startDynamoDbLocal();
});
afterAll(async () => second?.stop());

/** run local/start.ts; resolves with its output once it is ready (or has exited) */
function start(args: string[]): Promise<{ child: ChildProcess; out: string; code: number | null }> {
  const child = spawn(TSX, ['local/start.ts', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, BERTH_DDB_FAULTS: '' },
  });
  let out = '';
  return new Promise((resolve) => {
    const done = (code: number | null) => resolve({ child, out, code });
    child.stdout!.on('data', (d) => {
      out += String(d);
      if (out.includes('ready in')) done(null);
    });
    child.stderr!.on('data', (d) => (out += String(d)));
    child.once('exit', (code) => done(code));
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

describe('npm start with an existing DynamoDB', () => {
  it('--ddb-endpoint URL --table NAME: uses that database (creating the table), starts no DynamoDB Local; the injector can sit in between', async () => {
    const table = `ext_${randomUUID().replace(/-/g, '')}`;
    const { child, out } = await start([
      '--ddb-endpoint',
      second.endpoint,
      '--table',
      table,
      '--ddb-faults',
      'rate=0,seed=5',
      '--placement-port',
      '0',
      '--baremetal-port',
      '0',
      '--no-dashboard',
      '--maintenance-interval',
      '0',
    ]);
    try {
      expect(out).toContain(`[berth] DynamoDB        ${second.endpoint}  table ${table}  (existing endpoint)`);
      expect(out).toContain('[berth] fault injector');
      expect(out).not.toContain('DynamoDB Local');
      const url = /Placement API\s+(\S+)/.exec(out)![1]!;
      const uuid = randomUUID();
      const headers = { 'x-auth-token': 'admin', 'content-type': 'application/json', 'openstack-api-version': 'placement latest' };
      const r = await fetch(`${url}/resource_providers`, { method: 'POST', headers, body: JSON.stringify({ name: `ext-${uuid}`, uuid }) });
      expect(r.status).toBe(200);
      // the provider is in the table npm start created in the second DynamoDB Local
      const c = localClient(second.endpoint);
      try {
        expect((await c.send(new DescribeTableCommand({ TableName: table }))).Table?.TableStatus).toBe('ACTIVE');
        const it = await c.send(new GetItemCommand({ TableName: table, Key: { pk: { S: `RP#${uuid}` }, sk: { S: 'RP' } }, ConsistentRead: true }));
        expect(it.Item?.name?.S).toBe(`ext-${uuid}`);
      } finally {
        c.destroy();
      }
    } finally {
      await stop(child);
    }
  }, 120_000);

  it('--ddb-port on a port already served is refused with a clear error', async () => {
    const { child, out, code } = await start([
      '--fresh',
      '--ddb-port',
      String(second.port),
      '--placement-port',
      '0',
      '--baremetal-port',
      '0',
      '--no-dashboard',
    ]);
    await stop(child);
    expect(code).toBe(1);
    expect(out).toContain(`--ddb-port ${second.port}: the port is in use`);
    expect(out).toContain(`--ddb-endpoint http://127.0.0.1:${second.port}`);
  }, 120_000);

  it('DynamoDB Local writes nothing into the repository, and its metadata file is ignored', () => {
    expect(existsSync(join(ROOT, 'dynamodb-local-metadata.json'))).toBe(false);
    expect(readFileSync(join(ROOT, '.gitignore'), 'utf8')).toContain('/dynamodb-local-metadata.json');
  });
});
