/**
 * X-Ray and the Lambda init phase: the functions that hold the provider forest load it
 * while Lambda initialises them (SNAPSHOT_PREWARM), before any invocation exists. X-Ray
 * has no trace to put those DynamoDB calls in: an instrumented client (and the X-Ray
 * SDK's global https patch, which sees every request) made it log "Missing AWS Lambda
 * trace data" (an ERROR with a stack) for each call.
 *
 * A Lambda-like child process (the variables the runtime sets, tracing on, no trace id
 * during init) imports a forest family's handler module — its top-level prewarm is the
 * init-phase code path — against a stand-in DynamoDB endpoint, then handles one request
 * with a trace id. A UDP socket plays the X-Ray daemon: the calls made inside the
 * invocation still arrive as DynamoDB subsegments of its trace; init's calls leave no
 * error and no subsegment.
 */
import { spawn } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(__dirname, '..', '..', '..');
const TRACE_ROOT = '1-5759e988-bd862e3fe1be46a994272793';

let ddb: Server;
let daemon: Socket;
let ddbCalls = 0;
const segments: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  // an empty table: every read finds nothing (one answer fits GetItem, Query and BatchGetItem)
  ddb = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      ddbCalls++;
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': `r${ddbCalls}` });
      res.end(JSON.stringify({ Items: [], Count: 0, ScannedCount: 0, Responses: {}, UnprocessedKeys: {} }));
    });
  });
  await new Promise<void>((r) => ddb.listen(0, '127.0.0.1', r));
  daemon = createSocket('udp4');
  // each datagram: a JSON header line, then one (sub)segment document
  daemon.on('message', (m) => segments.push(JSON.parse(String(m).split('\n')[1] ?? '{}')));
  await new Promise<void>((r) => daemon.bind(0, '127.0.0.1', r));
});

afterAll(async () => {
  daemon.close();
  await new Promise((r) => ddb.close(r));
});

/** the child: import the handler (init), then one invocation with a trace id */
const CHILD = `
const mod = await import('./functions/placement/traits.ts');
process.stdout.write('INIT-DONE\\n');
process.env._X_AMZN_TRACE_ID = 'Root=${TRACE_ROOT};Parent=53995c3f42cd8ad8;Sampled=1';
const { fakeContext } = await import('./local/http-adapter.ts');
const { requestEvent } = await import('./scripts/invoke.ts');
const r = await mod.handler(requestEvent('placement-traits', 'GET', '/traits', { 'openstack-api-version': 'placement 1.39' }), fakeContext('placement-traits'));
process.stdout.write('INVOKED ' + r.statusCode + '\\n');
// the X-Ray SDK sends over UDP without waiting: give the datagrams a moment
setTimeout(() => process.exit(0), 300);
`;

function runChild(): Promise<{ out: string; initCalls: number }> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    // what the Lambda runtime sets (tracing switches itself on only in a Lambda environment)
    AWS_LAMBDA_FUNCTION_NAME: 'berth-placement-traits',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    LAMBDA_TASK_ROOT: ROOT,
    AWS_REGION: 'eu-west-1',
    AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${(daemon.address() as AddressInfo).port}`,
    // what cdk/ sets on a forest family
    SNAPSHOT_PREWARM: 'true',
    TABLE_NAME: 'berth',
    DDB_ENDPOINT: `http://127.0.0.1:${(ddb.address() as AddressInfo).port}`,
    AUTH_STRATEGY: 'noauth2',
    BERTH_INSECURE_NOAUTH: 'true',
    POWERTOOLS_METRICS_DISABLED: 'true',
    LOG_FORMAT: 'json',
  };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], { cwd: ROOT, env });
    let out = '';
    let initCalls = -1;
    const take = (d: Buffer) => {
      out += String(d);
      if (initCalls < 0 && out.includes('INIT-DONE')) initCalls = ddbCalls;
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('exit', () => {
      clearTimeout(timer);
      resolve({ out, initCalls });
    });
  });
}

describe('X-Ray in the init phase', () => {
  it('records no subsegment and logs no missing-context error for DynamoDB calls made before any invocation', async () => {
    const { out, initCalls } = await runChild();
    expect(out).toContain('INIT-DONE');
    expect(out).toMatch(/INVOKED \d{3}/);
    // the prewarm really called DynamoDB during init, and the request called it again
    expect(initCalls).toBeGreaterThan(0);
    expect(ddbCalls).toBeGreaterThan(initCalls);
    // no missing-context error, whichever way the X-Ray SDK words it
    expect(out).not.toMatch(/Missing AWS Lambda trace data|Failed to get the current sub\/segment|context missing/i);
    // inside the invocation the DynamoDB calls are traced, in the invocation's trace only
    const dynamo = segments.filter((s) => s.name === 'DynamoDB');
    expect(dynamo.length).toBeGreaterThan(0);
    for (const s of segments) expect(s.trace_id, JSON.stringify(s)).toBe(TRACE_ROOT);
  }, 120_000);
});
