/**
 * 5xx bodies say nothing about what went wrong: the real handlers of both APIs, behind
 * the local API Gateway adapter, talk to a DynamoDB endpoint that fails the way AWS does
 * (an AccessDenied naming the account and the function's role, a dropped connection —
 * "socket hang up" —, throttling). Each answer is a 5xx in the API's own error format
 * with a generic text and the request id; the SDK's text is in the log under that id,
 * never in the body. The Lambda wrapper's last line of defence answers the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { useTable } from '../harness.js';
import { resetConfig } from '../../../functions/config.js';
import { captureOutput, type CapturedOutput } from '../../capture-output.js';

const ARN = 'arn:aws:sts::123456789012:assumed-role/Berth-PlacementRole-1A2B3C/berth-placement';
const FAILURES = {
  'access denied': {
    status: 400,
    type: 'com.amazon.coral.service#AccessDeniedException',
    message: `User: ${ARN} is not authorized to perform: dynamodb:GetItem on resource: arn:aws:dynamodb:eu-west-1:123456789012:table/berth`,
    leak: ['123456789012', 'assumed-role', 'AccessDenied'],
  },
  'socket hang up': { status: 0, type: '', message: '', leak: ['socket hang up', 'ECONNRESET'] },
  throttling: {
    status: 400,
    type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
    message: 'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level',
    leak: ['provisioned throughput', 'ProvisionedThroughputExceeded'],
  },
} as const;
type Failure = keyof typeof FAILURES;

let failure: Failure = 'access denied';
let fake: Server;
let fakeUrl: string;
const servers: Server[] = [];
let placementUrl: string;
let baremetalUrl: string;
const saved = { ...process.env };
let output: CapturedOutput;

beforeAll(async () => {
  await useTable({ POWERTOOLS_METRICS_DISABLED: 'true', DDB_REQUEST_TIMEOUT_MS: '2000' });
  // a DynamoDB endpoint that fails every call the way AWS does
  fake = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const f = FAILURES[failure];
      if (f.status === 0) return req.socket.destroy();
      res.writeHead(f.status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID() });
      res.end(JSON.stringify({ __type: f.type, message: f.message }));
    });
  });
  await new Promise<void>((r) => fake.listen(0, '127.0.0.1', () => r()));
  fakeUrl = `http://127.0.0.1:${(fake.address() as { port: number }).port}`;
  process.env.DDB_ENDPOINT = fakeUrl;
  resetConfig();
  const { servePlacement, serveBaremetal } = await import('../../../local/apis.js');
  const p = await servePlacement(0);
  const b = await serveBaremetal(0);
  servers.push(p, b);
  placementUrl = `http://127.0.0.1:${(p.address() as { port: number }).port}`;
  baremetalUrl = `http://127.0.0.1:${(b.address() as { port: number }).port}`;
  output = captureOutput();
});
afterAll(async () => {
  output.restore();
  for (const s of [...servers, fake]) {
    s?.closeAllConnections?.();
    await new Promise((r) => s?.close(r));
  }
  process.env = saved;
  resetConfig();
});

async function get(url: string, path: string, headers: Record<string, string>, method = 'GET', body?: unknown) {
  const r = await fetch(url + path, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: r.status, text: await r.text(), requestId: r.headers.get('openstack-request-id') ?? '' };
}

const PLACEMENT = { 'x-auth-token': 'admin', accept: 'application/json', 'openstack-api-version': 'placement latest' };
const BAREMETAL = { 'x-openstack-ironic-api-version': '1.80' };

describe('an AWS failure is a generic 5xx with the request id; the detail is logged only', () => {
  for (const f of Object.keys(FAILURES) as Failure[]) {
    it(f, async () => {
      failure = f;
      const calls = [
        () => get(placementUrl, `/resource_providers/${randomUUID()}`, PLACEMENT),
        () => get(placementUrl, '/resource_providers', PLACEMENT, 'POST', { name: 'rp' }),
        () => get(baremetalUrl, `/v1/nodes/${randomUUID()}`, BAREMETAL),
        () => get(baremetalUrl, '/v1/nodes', BAREMETAL, 'POST', { driver: 'fake-hardware' }),
      ];
      for (const call of calls) {
        const before = output.text.length;
        const r = await call();
        expect(r.status, r.text).toBeGreaterThanOrEqual(500);
        for (const leak of FAILURES[f].leak) expect(r.text).not.toContain(leak);
        expect(r.text).not.toMatch(/at \S+ \(|node_modules|\.ts:\d+/); // no stack
        if (r.status === 500) {
          expect(r.requestId).toMatch(/^req-/);
          expect(r.text).toContain(r.requestId);
          // what the body leaves out is in the log, under the same request id
          const log = output.text.slice(before);
          expect(log).toContain(r.requestId);
          if (f === 'access denied') expect(log).toContain('AccessDenied');
        }
      }
    });
  }
});

describe('the Lambda wrapper’s last line of defence', () => {
  it('answers an escaped error with a generic 500 and a request id', async () => {
    const { httpLambda } = await import('../../../functions/http/apigw.js');
    const { placementApp } = await import('../../../functions/placement/framework/app.js');
    const { baremetalApp } = await import('../../../functions/baremetal/framework/app.js');
    const secret = `socket hang up while calling ${ARN}`;
    const before = output.text.length;
    // each API's app registers how its 500 looks; the wrapper uses it for what escapes the app
    const crashes = { 'placement-traits': placementApp({}).crash, 'baremetal-nodes': baremetalApp({}).crash };
    for (const [name, crash] of Object.entries(crashes)) {
      const thrower = Object.assign(
        async () => {
          throw new Error(secret);
        },
        { crash },
      );
      const fn = httpLambda(thrower, name);
      const event = {
        version: '2.0',
        rawPath: '/x',
        rawQueryString: '',
        headers: {},
        requestContext: { http: { method: 'GET' }, domainName: 'api.example.com' },
      } as unknown as APIGatewayProxyEventV2;
      const res = await fn(event, { functionName: name, awsRequestId: 'a', getRemainingTimeInMillis: () => 1000 } as unknown as Context);
      const body = String(res.body);
      expect(res.statusCode).toBe(500);
      expect(body).not.toContain('socket hang up');
      expect(body).not.toContain('123456789012');
      const id = /req-[0-9a-f-]{36}/.exec(body)?.[0];
      expect(id, body).toBeDefined();
      expect(output.text.slice(before)).toContain(id!);
      if (name.startsWith('baremetal')) expect(JSON.parse(JSON.parse(body).error_message).faultcode).toBe('Server');
      else expect(JSON.parse(body).errors[0].request_id).toBe(id);
    }
    expect(output.text.slice(before)).toContain('socket hang up');
  });
});
