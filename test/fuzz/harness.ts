/**
 * Fuzz harness: raw HTTP requests (any bytes, any header) to a local server, the whole
 * DynamoDB table as the state to compare before and after a refused request, and the
 * run settings (FUZZ_RUNS, FUZZ_SEED; `npm run fuzz` sets FUZZ_LONG for a longer run
 * with a random seed).
 */
import { request } from 'node:http';
import { DynamoDBClient, ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';

export interface RawReq {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}
export interface RawRes {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export function send(base: string, r: RawReq): Promise<RawRes> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        method: r.method,
        path: r.path,
        headers: { ...r.headers, ...(r.body ? { 'content-length': String(r.body.length) } : {}) },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (r.body) req.end(r.body);
    else req.end();
  });
}

/** The table's items, sorted: what "nothing changed" is checked against. */
export async function tableState(endpoint: string, table: string): Promise<string> {
  const client = tableClient(endpoint);
  const items: Record<string, AttributeValue>[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const r = await client.send(new ScanCommand({ TableName: table, ConsistentRead: true, ExclusiveStartKey: start }));
    items.push(...(r.Items ?? []));
    start = r.LastEvaluatedKey;
  } while (start);
  const key = (i: Record<string, AttributeValue>) => `${i.pk?.S}\u0000${i.sk?.S}`;
  items.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  return JSON.stringify(items, (_k, v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  );
}

const clients = new Map<string, DynamoDBClient>();
function tableClient(endpoint: string): DynamoDBClient {
  let c = clients.get(endpoint);
  if (!c) {
    c = new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    clients.set(endpoint, c);
  }
  return c;
}

/** Where two table states differ (first differing item), for the failure message. */
export function stateDiff(a: string, b: string): string {
  const x = JSON.parse(a) as unknown[];
  const y = JSON.parse(b) as unknown[];
  const sx = new Set(x.map((i) => JSON.stringify(i)));
  const sy = new Set(y.map((i) => JSON.stringify(i)));
  const gone = [...sx].filter((i) => !sy.has(i)).slice(0, 2);
  const added = [...sy].filter((i) => !sx.has(i)).slice(0, 2);
  return `removed/changed: ${gone.join('\n')}\nadded/changed: ${added.join('\n')}`.slice(0, 3000);
}

export interface FuzzSettings {
  runs: number;
  seed: number;
  long: boolean;
}

/** Default: a fixed seed and a run count bounded for `npm test`; FUZZ_LONG: more runs, random seed. */
export function fuzzSettings(defaultRuns: number): FuzzSettings {
  const long = process.env.FUZZ_LONG === '1' || process.env.FUZZ_LONG === 'true';
  const runs = Number(process.env.FUZZ_RUNS) || (long ? defaultRuns * 10 : defaultRuns);
  const seed = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : long ? (Math.random() * 2 ** 31) | 0 : 20261122;
  return { runs, seed, long };
}

/** A test timeout for a run of this size (a few ms per case on this machine, with a wide margin). */
export function fuzzTimeout(s: FuzzSettings): number {
  return 120_000 + s.runs * 200;
}

export interface CaseStats {
  cases: number;
  byStatus: Map<number, number>;
  started: number;
}

export function newStats(): CaseStats {
  return { cases: 0, byStatus: new Map(), started: Date.now() };
}

export function report(name: string, s: FuzzSettings, st: CaseStats): string {
  const statuses = [...st.byStatus.entries()]
    .sort(([a], [b]) => a - b)
    .map(([k, v]) => `${k}:${v}`)
    .join(' ');
  const line = `[fuzz] ${name}: ${st.cases} generated cases in ${((Date.now() - st.started) / 1000).toFixed(1)} s (seed ${s.seed}, runs ${s.runs}) statuses ${statuses}`;
  process.stdout.write(`${line}\n`);
  return line;
}

export { fc };

/** A short, printable summary of a request (fuzz cases can be megabytes long). */
export function describeReq(r: RawReq, res?: RawRes): string {
  const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…(${s.length})` : s);
  const body = r.body ? cut(JSON.stringify(r.body.toString('utf8')), 400) : '-';
  return `${r.method} ${cut(r.path, 300)} headers=${cut(JSON.stringify(r.headers), 300)} body=${body}${res ? ` -> ${res.status} ${cut(res.text, 400)}` : ''}`;
}

/**
 * Run `step` over `runs` generated requests (fixed or given seed, stop at the first
 * failure without shrinking: every case costs HTTP round trips) and throw a readable
 * error naming the case and the seed to replay it.
 */
export async function runFuzz(
  name: string,
  arb: fc.Arbitrary<RawReq>,
  s: FuzzSettings,
  stats: CaseStats,
  step: (r: RawReq) => Promise<void>,
): Promise<void> {
  const wrapped = async (r: RawReq) => {
    try {
      await step(r);
    } catch (e) {
      const msg = String((e as Error)?.message ?? e);
      throw new Error(msg.includes(r.method) ? msg : `${msg} on ${describeReq(r)}`);
    }
  };
  const out = await fc.check(fc.asyncProperty(arb, wrapped), { numRuns: s.runs, seed: s.seed, endOnFailure: true });
  report(name, s, stats);
  if (out.failed) {
    const err = out.errorInstance as Error | undefined;
    throw new Error(
      `[fuzz] ${name} failed after ${out.numRuns} cases (replay: FUZZ_SEED=${s.seed}, case ${out.numRuns}):\n${String(err?.message ?? err).slice(0, 4000)}`,
    );
  }
}

/**
 * Refusals that come from the HTTP layer in front of the API (API Gateway in AWS, the
 * local adapter's stand-in): an oversized request line/headers or a request node's
 * parser rejects. Body `{"message": ...}`, status 400/413/414/431.
 */
export function gatewayError(res: RawRes): boolean {
  if (![400, 413, 414, 431].includes(res.status)) return false;
  try {
    const b = JSON.parse(res.text) as Record<string, unknown>;
    return typeof b.message === 'string' && Object.keys(b).length === 1;
  } catch {
    return false;
  }
}
