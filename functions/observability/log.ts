/**
 * Logs: one line per event with the request id on it; never request bodies or auth
 * headers. In AWS, and whenever the output is a pipe or a file, they are Powertools'
 * structured JSON (one object per line: what CloudWatch Logs Insights and log
 * shippers read). On a terminal (`npm start`) the same events print as one readable
 * line each:
 *
 *   12:04:05.123 INFO  placement-traits GET /traits 200 4ms req-5d1c…
 *   12:04:06.002 ERROR placement-traits POST /traits 500 3ms req-9a0e… error="TypeError: …"
 *
 * LOG_FORMAT=json|text forces one or the other (config.ts); LOG_LEVEL applies to both,
 * LOG_SAMPLE_RATE to the JSON output (Powertools switches a sampled invocation to DEBUG).
 */
import { loadConfig } from '../config.js';
import { logger } from './powertools.js';

type Fields = Record<string, unknown>;
type Level = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

const RANK: Record<string, number> = { TRACE: 0, DEBUG: 1, INFO: 2, WARN: 3, ERROR: 4, CRITICAL: 5, SILENT: 6 };

/** a field value as it reads in a line: bare when it is one word, else JSON */
function value(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  if (v instanceof Error) return JSON.stringify(String(v.stack ?? v));
  return JSON.stringify(v) ?? String(v);
}

/** One readable line for a log event (a request: its function, method, path, status, time and id). */
export function formatLine(level: Level, msg: string, fields: Fields, now = new Date()): string {
  const time = now.toISOString().slice(11, 23);
  const rest = { ...fields };
  let head = msg;
  if (msg === 'request' && 'method' in rest && 'path' in rest && 'status' in rest) {
    head = [rest.fn, rest.method, rest.path, rest.status, rest.ms !== undefined ? `${rest.ms}ms` : undefined, rest.request_id]
      .filter((x) => x !== undefined)
      .join(' ');
    for (const k of ['fn', 'method', 'path', 'status', 'ms', 'request_id']) delete rest[k];
  }
  const tail = Object.entries(rest)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${value(v)}`);
  return [time, level.padEnd(5), head, ...tail].join(' ');
}

const settings = loadConfig().observability;
const text = settings.logFormat === 'text' || (settings.logFormat === 'auto' && process.stdout.isTTY === true);
const threshold = RANK[settings.logLevel] ?? RANK.INFO!;

function line(level: Level, msg: string, f: Fields): void {
  if (RANK[level]! < threshold) return;
  const out = formatLine(level, msg, f);
  if (level === 'WARN' || level === 'ERROR') process.stderr.write(`${out}\n`);
  else process.stdout.write(`${out}\n`);
}

export const log = text
  ? {
      debug: (msg: string, f: Fields = {}) => line('DEBUG', msg, f),
      info: (msg: string, f: Fields = {}) => line('INFO', msg, f),
      warn: (msg: string, f: Fields = {}) => line('WARN', msg, f),
      error: (msg: string, f: Fields = {}) => line('ERROR', msg, f),
    }
  : {
      debug: (msg: string, f: Fields = {}) => logger.debug(msg, f),
      info: (msg: string, f: Fields = {}) => logger.info(msg, f),
      warn: (msg: string, f: Fields = {}) => logger.warn(msg, f),
      error: (msg: string, f: Fields = {}) => logger.error(msg, f),
    };

/** which of the two this process writes (the local runtime says so at start) */
export const logFormat: 'json' | 'text' = text ? 'text' : 'json';
