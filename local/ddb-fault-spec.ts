/**
 * What the fault injector (./ddb-faults.ts) injects: the kinds, their rates, the seed and
 * the lag, as `--ddb-faults SPEC` writes them (`npm start`, the benches, the tests).
 */
export const FAULT_KINDS = ['throttle', 'conflict', 'inprogress', 'error', 'lost', 'latency'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultSpec {
  seed: number;
  /** probability per call of a fault, spread over the kinds that apply */
  rate: number;
  /** explicit probabilities per kind (override the share of `rate`) */
  rates: Partial<Record<FaultKind, number>>;
  latencyMs: number;
  lagMs: number;
  inProgressMs: number;
}

export const NO_FAULTS: FaultSpec = { seed: 1, rate: 0, rates: {}, latencyMs: 50, lagMs: 0, inProgressMs: 1500 };

export function parseFaults(text: string): FaultSpec {
  const spec: FaultSpec = { ...NO_FAULTS, rates: {} };
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [k, v] = part.split('=').map((x) => x.trim());
    const n = Number(v);
    if (!k || v === undefined || !Number.isFinite(n) || n < 0) throw new Error(`--ddb-faults: '${part}' is not name=number`);
    if (k === 'rate') spec.rate = check(k, n);
    else if (k === 'seed') spec.seed = Math.floor(n);
    else if (k === 'latency-ms') spec.latencyMs = n;
    else if (k === 'lag') spec.lagMs = n;
    else if (k === 'inprogress-ms') spec.inProgressMs = n;
    else if ((FAULT_KINDS as readonly string[]).includes(k)) spec.rates[k as FaultKind] = check(k, n);
    else throw new Error(`--ddb-faults: unknown setting '${k}' (rate, seed, lag, latency-ms, inprogress-ms, ${FAULT_KINDS.join(', ')})`);
  }
  return spec;
}

function check(k: string, n: number): number {
  if (n > 1) throw new Error(`--ddb-faults: ${k}=${n} is a probability (0..1)`);
  return n;
}

export function describeFaults(s: FaultSpec): string {
  const parts = [`rate=${s.rate}`, ...Object.entries(s.rates).map(([k, v]) => `${k}=${v}`), `seed=${s.seed}`];
  if (s.lagMs) parts.push(`lag=${s.lagMs}ms`);
  return parts.join(' ');
}
