/**
 * Log lines for people and for tools (functions/observability/log.ts): one readable
 * line per event on a terminal, Powertools JSON (one object per line) otherwise;
 * LOG_FORMAT forces either.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatLine } from '../../../functions/observability/log.js';

const ROOT = join(__dirname, '..', '..', '..');

/** log one request line in a fresh process (stdout is a pipe here, as in Lambda) */
function logInChild(env: Record<string, string>): string {
  const script = `import('./functions/observability/log.ts').then(({ log }) => {
    log.info('request', { fn: 'placement-traits', request_id: 'req-1', method: 'GET', path: '/traits', status: 200, ms: 4 });
  })`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } as NodeJS.ProcessEnv,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return r.stdout.trim();
}

describe('log lines', () => {
  it('formats a request as one readable line: time, level, function, method, path, status, time taken, request id', () => {
    const at = new Date('2024-05-01T12:04:05.123Z');
    expect(
      formatLine('INFO', 'request', { fn: 'placement-traits', request_id: 'req-1', method: 'GET', path: '/traits', status: 200, ms: 4 }, at),
    ).toBe('12:04:05.123 INFO  placement-traits GET /traits 200 4ms req-1');
    expect(formatLine('ERROR', 'unhandled error', { fn: 'x', error: 'TypeError: boom\n  at y' }, at)).toBe(
      '12:04:05.123 ERROR unhandled error fn=x error="TypeError: boom\\n  at y"',
    );
    expect(formatLine('WARN', 'retry', { attempt: 2, table: 'berth', extra: undefined, ids: ['a', 'b'] }, at)).toBe(
      '12:04:05.123 WARN  retry attempt=2 table=berth ids=["a","b"]',
    );
  });

  it('writes Powertools JSON to a pipe, readable lines when LOG_FORMAT=text', () => {
    const json = JSON.parse(logInChild({}));
    expect(json).toMatchObject({ level: 'INFO', message: 'request', method: 'GET', path: '/traits', status: 200, request_id: 'req-1' });
    expect(logInChild({ LOG_FORMAT: 'text' })).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}placement-traits GET \/traits 200 4ms req-1$/);
    expect(logInChild({ LOG_FORMAT: 'text', LOG_LEVEL: 'warn' })).toBe('');
  });

  // util-linux's script(1) gives the child a pseudo-terminal, as `npm start` in a shell has
  it.skipIf(!existsSync('/usr/bin/script'))('writes readable lines on a terminal without being told', () => {
    const cmd = `node --import tsx -e "import('./functions/observability/log.ts').then(({ log }) => log.info('request', { fn: 'f', request_id: 'r', method: 'GET', path: '/', status: 200, ms: 1 }))"`;
    const r = spawnSync('/usr/bin/script', ['-qec', cmd, '/dev/null'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME } as NodeJS.ProcessEnv,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.stdout).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}f GET \/ 200 1ms r\r?$/m);
    expect(r.stdout).not.toContain('"level"');
  });
});
