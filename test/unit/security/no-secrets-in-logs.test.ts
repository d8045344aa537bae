/**
 * No secrets in logs: a Lambda's log lines never carry the caller's token or the
 * request body, even with the most verbose settings an operator could switch on
 * (POWERTOOLS_LOGGER_LOG_EVENT, DEBUG level), on success, refusal and crash paths;
 * the Keystone authorizer never logs the token it failed to validate.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { captureOutput, type CapturedOutput } from '../../capture-output.js';

const TOKEN = 'gAAAAAB-secret-token-7f3a';
const BODY_SECRET = 'body-secret-9c1e';
const saved = { ...process.env };
let output: CapturedOutput;

beforeAll(() => {
  process.env.POWERTOOLS_LOGGER_LOG_EVENT = 'true';
  process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
  process.env.AWS_LAMBDA_LOG_LEVEL = 'DEBUG';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  output = captureOutput();
});
afterAll(() => {
  output.restore();
  process.env = saved;
});

function event(method: string, path: string, body?: string): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: {
      'x-auth-token': TOKEN,
      'openstack-api-version': 'placement latest',
      accept: 'application/json',
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    requestContext: {
      accountId: '1',
      apiId: 'a',
      domainName: 'example.com',
      domainPrefix: 'example',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: 'r',
      routeKey: '$default',
      stage: '$default',
      time: '',
      timeEpoch: 0,
    },
    body,
    isBase64Encoded: false,
  };
}
const context = {
  functionName: 'placement-root',
  awsRequestId: 'req',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:1:function:x',
  memoryLimitInMB: '128',
  functionVersion: '1',
  getRemainingTimeInMillis: () => 1000,
} as unknown as Context;

describe('Lambda logs', () => {
  it('carry neither the token nor the body, on success, 404 and crash paths', async () => {
    const { handler } = await import('../../../functions/placement/root.js');
    const before = output.text.length;
    const ok = await handler(event('GET', '/'), context);
    expect(ok.statusCode).toBe(200);
    const missing = await handler(event('POST', '/nope', JSON.stringify({ name: BODY_SECRET })), context);
    expect(missing.statusCode).toBe(404);
    // a route this function does not serve: the crash path (500, error logged with its stack)
    const crash = await handler(event('POST', '/resource_classes', JSON.stringify({ name: BODY_SECRET })), context);
    expect(crash.statusCode).toBe(500);
    const logged = output.text.slice(before);
    expect(logged).toContain('"request"'); // the access line was written: the capture works
    expect(logged).toContain('placement handler failed');
    expect(logged).not.toContain(TOKEN);
    expect(logged).not.toContain(BODY_SECRET);
  });

  it('the Keystone authorizer logs its failure without the token', async () => {
    const { makeAuthorizer } = await import('../../../functions/authorizer/keystone.js');
    const { KeystoneValidator } = await import('../../../functions/authorizer/keystone-client.js');
    // nothing listens there: validation fails with a network error
    const v = new KeystoneValidator({
      url: 'http://127.0.0.1:18601/v3',
      username: 'placement',
      password: 'service-password-secret',
      project: 'service',
      userDomain: 'Default',
      projectDomain: 'Default',
      cacheTtlMs: 0,
      timeoutMs: 500,
    } as never);
    const before = output.text.length;
    // Keystone unreachable is an error (API Gateway: 500, not cached), not a deny it would cache
    await expect(makeAuthorizer(() => v)({ headers: { 'X-Auth-Token': TOKEN } } as never)).rejects.toThrow('token validation unavailable');
    const logged = output.text.slice(before);
    expect(logged).toContain('keystone authorizer error');
    expect(logged).not.toContain(TOKEN);
    expect(logged).not.toContain('service-password-secret');
  });
});
