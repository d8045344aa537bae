/**
 * The access line (functions/http/apigw.ts) at the levels AWS runs with: at WARN (cdk/'s
 * default) a successful or client-error request writes nothing, a sampled invocation
 * (LOG_SAMPLE_RATE) writes its line, and a server-side failure always does, as an ERROR
 * carrying the error. Each case runs in its own process, as the Logger reads its level
 * and sample rate once, when a Lambda container starts.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(__dirname, '..', '..', '..');

interface Line {
  level: string;
  message: string;
  status?: number;
  method?: string;
  path?: string;
  error?: string;
}

/** three version-document GETs, a 404, a request the function fails on (500), and an event it cannot even read */
const SCRIPT = `
const { handler } = await import('./functions/placement/root.ts');
const { fakeContext } = await import('./local/http-adapter.ts');
const ev = (method, path) => ({ version: '2.0', routeKey: '$default', rawPath: path, rawQueryString: '', headers: { 'x-auth-token': 'admin' },
  requestContext: { domainName: 'example.com', http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 't' }, stage: '$default' },
  isBase64Encoded: false });
const ctx = fakeContext('placement-root');
const statuses = [];
for (const [m, p] of [['GET', '/'], ['GET', '/'], ['GET', '/'], ['GET', '/nope'], ['POST', '/resource_classes']]) statuses.push((await handler(ev(m, p), ctx)).statusCode);
statuses.push((await handler(null, ctx)).statusCode);
process.stdout.write('STATUSES ' + statuses.join(',') + '\\n');
`;

function run(env: Record<string, string>): { statuses: string; lines: Line[] } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_FORMAT: 'json', POWERTOOLS_METRICS_DISABLED: 'true', ...env } as NodeJS.ProcessEnv,
    encoding: 'utf8',
    timeout: 60_000,
  });
  const text = `${r.stdout}\n${r.stderr}`;
  const lines = text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
  return { statuses: /STATUSES (\S+)/.exec(r.stdout)?.[1] ?? r.stderr, lines };
}

const access = (lines: Line[]) => lines.filter((l) => l.message === 'request');

describe('the access line', () => {
  it('at WARN: nothing for 2xx and 4xx, one ERROR line for each 5xx, with its error', () => {
    const { statuses, lines } = run({ LOG_LEVEL: 'WARN', LOG_SAMPLE_RATE: '0' });
    expect(statuses).toBe('200,200,200,404,500,500');
    const a = access(lines);
    expect(a.map((l) => [l.level, l.status])).toEqual([
      ['ERROR', 500],
      ['ERROR', 500],
    ]);
    expect(a[0]).toMatchObject({ method: 'POST', path: '/resource_classes' });
    // the event the function could not read: its line still says what failed
    expect(a[1]?.error).toMatch(/TypeError/);
    expect(lines.every((l) => l.level === 'ERROR' || l.level === 'WARN')).toBe(true);
  });

  it('at WARN with every invocation sampled: every request writes its line', () => {
    const { statuses, lines } = run({ LOG_LEVEL: 'WARN', LOG_SAMPLE_RATE: '1' });
    expect(statuses).toBe('200,200,200,404,500,500');
    expect(access(lines).map((l) => l.status)).toEqual([200, 200, 200, 404, 500, 500]);
  });

  it('at INFO (the local default): every request writes its line', () => {
    const { lines } = run({});
    expect(access(lines).map((l) => [l.level, l.status])).toEqual([
      ['INFO', 200],
      ['INFO', 200],
      ['INFO', 200],
      ['INFO', 404],
      ['ERROR', 500],
      ['ERROR', 500],
    ]);
  });

  // why cdk/ leaves Lambda's log-level filter off (Text log format): with it, Lambda sets
  // AWS_LAMBDA_LOG_LEVEL, which the Logger obeys over LOG_LEVEL and over sampling
  it('is not sampled once Lambda imposes its own level (AWS_LAMBDA_LOG_LEVEL)', () => {
    const { lines } = run({ LOG_LEVEL: 'WARN', LOG_SAMPLE_RATE: '1', AWS_LAMBDA_LOG_LEVEL: 'WARN' });
    expect(access(lines).map((l) => l.status)).toEqual([500, 500]);
  });
});
