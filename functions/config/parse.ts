/**
 * How functions/config.ts reads an environment variable: lists, numbers with their
 * defaults, optional strings, the `RATE[:BURST]` of a rate limit, and AUTH_STRATEGY,
 * failing closed. Pure: the environment is passed in.
 */
import type { Config, RateLimit } from './settings.js';

export type Env = Record<string, string | undefined>;

export function list(v: string | undefined): string[] {
  return (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function int(v: string | undefined, d: number): number {
  const n = v === undefined || v === '' ? Number.NaN : Number.parseInt(v, 10);
  return Number.isFinite(n) ? n : d;
}

export function num(v: string | undefined, d: number): number {
  const n = v === undefined || v === '' ? Number.NaN : Number(v);
  return Number.isFinite(n) ? n : d;
}

export function optional(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

/** `RATE[:BURST]` (the burst defaults to the rate, rounded up); anything else: off */
export function parseRateLimit(v: string | undefined): RateLimit | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)(?::(\d+))?\s*$/.exec(v ?? '');
  if (!m) return undefined;
  const rate = Number(m[1]);
  const burst = m[2] === undefined ? Math.max(1, Math.ceil(rate)) : Number(m[2]);
  return rate > 0 && burst >= 1 ? { rate, burst } : undefined;
}

/** AUTH_STRATEGY, failing closed: only an exact known value identifies anyone. */
export function authStrategy(env: Env): Pick<Config, 'authStrategy' | 'authProblem'> {
  const v = env.AUTH_STRATEGY;
  // the Lambda runtime sets AWS_LAMBDA_FUNCTION_NAME; the local adapter and the tests do not
  const inLambda = !!env.AWS_LAMBDA_FUNCTION_NAME;
  if (v === 'authorizer') return { authStrategy: 'authorizer' };
  if (v === 'noauth2' || ((v === undefined || v === '') && !inLambda)) {
    if (inLambda && env.BERTH_INSECURE_NOAUTH !== 'true') {
      return {
        authStrategy: 'refused',
        authProblem: 'AUTH_STRATEGY=noauth2 takes identity from request headers; in AWS it also needs BERTH_INSECURE_NOAUTH=true (tests only)',
      };
    }
    return { authStrategy: 'noauth2' };
  }
  if (v === undefined || v === '') return { authStrategy: 'refused', authProblem: 'AUTH_STRATEGY is not set (expected "authorizer")' };
  return { authStrategy: 'refused', authProblem: `AUTH_STRATEGY=${JSON.stringify(v)} is not a known strategy ("authorizer", or "noauth2" locally)` };
}
