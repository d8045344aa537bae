/**
 * Structured JSON logs (one object per line) with the request id on every line.
 * Never logs request bodies or auth headers.
 */
type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function threshold(): number {
  const l = (process.env.LOG_LEVEL ?? 'info').toLowerCase() as Level;
  return ORDER[l] ?? 20;
}

function emit(level: Level, msg: string, fields: Record<string, unknown>) {
  if (ORDER[level] < threshold()) return;
  const line = JSON.stringify({ level, msg, time: new Date().toISOString(), service: process.env.SERVICE_NAME ?? 'berth', ...fields });
  if (level === 'error' || level === 'warn') process.stderr.write(line + '\n');
  else process.stdout.write(line + '\n');
}

export const log = {
  debug: (msg: string, f: Record<string, unknown> = {}) => emit('debug', msg, f),
  info: (msg: string, f: Record<string, unknown> = {}) => emit('info', msg, f),
  warn: (msg: string, f: Record<string, unknown> = {}) => emit('warn', msg, f),
  error: (msg: string, f: Record<string, unknown> = {}) => emit('error', msg, f),
};
