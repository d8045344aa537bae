/**
 * The DynamoDB fault and lag injector: an HTTP proxy that sits between Berth's store
 * (the AWS SDK, pointed at it as its endpoint) and a DynamoDB endpoint (DynamoDB Local,
 * LocalStack), so the real handlers, the SDK's own retries and the store's outcome
 * resolution all meet the failures AWS has and DynamoDB Local has not (docs/consistency.md,
 * "Simulating AWS"):
 *
 *   throttle    answered at once, not forwarded: ThrottlingException /
 *               ProvisionedThroughputExceededException (a transaction: also a
 *               cancellation with ThrottlingError)
 *   conflict    writes only, not forwarded: TransactionCanceledException with a
 *               TransactionConflict reason (TransactWriteItems), TransactionConflictException
 *               (single-item writes)
 *   inprogress  TransactWriteItems only: forwarded (it commits), answered
 *               TransactionInProgressException, and for `inProgressMs` every retry with
 *               the same ClientRequestToken gets TransactionInProgressException too and
 *               every write touching its items a conflict — DynamoDB still processing the
 *               first attempt while the SDK retries
 *   error       HTTP 500 InternalServerError, half of the time after forwarding (a write
 *               that committed)
 *   lost        forwarded, then the connection is dropped without an answer
 *   latency     up to `latencyMs` more before forwarding
 *   lag         index reads (Query/Scan with IndexName) and eventually consistent reads
 *               see no write younger than `lagMs` (./ddb-lag.ts)
 *
 * Faults are drawn per call from a seeded generator. A spec is a comma-separated list:
 *   rate=R          probability that a call gets a fault, spread evenly over the kinds
 *                   that apply to the operation
 *   throttle=P ...  the probability of one kind (overrides its share of `rate`)
 *   latency-ms=N, lag=N (ms), inprogress-ms=N, seed=N
 * e.g. `rate=0.05,lag=500,seed=7` (`npm start -- --ddb-faults ...`, BERTH_DDB_FAULTS).
 * Administrative calls (CreateTable, DescribeTable, ...) are never faulted. The proxy
 * forwards requests as they are signed: use it with endpoints that do not check
 * signatures (DynamoDB Local, LocalStack).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Lock, readRequest, reply, upstreamClient, type Json, type Upstream } from './ddb-upstream.js';
import { closeServers } from './servers.js';
import { keyId, LagView, tableKey, type WireItem } from './ddb-lag.js';
import { SIDE_CALL_HEADER } from './attribution.js';
import { mulberry32 } from './prng.js';
import { FAULT_KINDS, type FaultKind, type FaultSpec } from './ddb-fault-spec.js';

export { FAULT_KINDS, NO_FAULTS, describeFaults, parseFaults, type FaultKind, type FaultSpec } from './ddb-fault-spec.js';

const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);
const SINGLE_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);
const TX_WRITE = 'TransactWriteItems';

function applicable(op: string): FaultKind[] {
  if (op === TX_WRITE) return [...FAULT_KINDS];
  if (SINGLE_WRITES.has(op)) return ['throttle', 'conflict', 'error', 'lost', 'latency'];
  if (READS.has(op)) return ['throttle', 'error', 'lost', 'latency'];
  return [];
}

export interface FaultStats {
  calls: number;
  byOp: Record<string, number>;
  faults: Record<FaultKind, number>;
  /** requests answered TransactionInProgress / conflict because an injected in-progress transaction held them */
  inProgressEchoes: number;
}

export interface FaultProxy {
  endpoint: string;
  port: number;
  spec: FaultSpec;
  stats: FaultStats;
  lag?: LagView;
  /** change the fault rates (the lag setting stays) */
  setSpec(spec: Partial<FaultSpec>): void;
  stop(): Promise<void>;
}

function awsError(type: string, message: string, extra: Json = {}): Buffer {
  return Buffer.from(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message, Message: message, ...extra }));
}

/** (table, key) of every item a write changes */
function writtenKeys(op: string, input: Json): Array<{ table: string; key: WireItem }> {
  const out: Array<{ table: string; key: WireItem }> = [];
  const add = (table: unknown, key: unknown) => {
    if (typeof table === 'string' && key && typeof key === 'object') out.push({ table, key: tableKey(key as WireItem) });
  };
  if (op === 'PutItem') add(input.TableName, input.Item);
  else if (op === 'UpdateItem' || op === 'DeleteItem') add(input.TableName, input.Key);
  else if (op === 'BatchWriteItem') {
    for (const [table, reqs] of Object.entries((input.RequestItems ?? {}) as Record<string, Json[]>)) {
      for (const r of reqs) add(table, (r.PutRequest as Json | undefined)?.Item ?? (r.DeleteRequest as Json | undefined)?.Key);
    }
  } else if (op === TX_WRITE) {
    for (const it of (input.TransactItems ?? []) as Json[]) {
      const put = it.Put as Json | undefined;
      const upd = (it.Update ?? it.Delete) as Json | undefined;
      if (put) add(put.TableName, put.Item);
      else if (upd) add(upd.TableName, upd.Key);
    }
  }
  return out;
}

export async function startFaultProxy(target: string, spec: FaultSpec, opts: { port?: number; host?: string } = {}): Promise<FaultProxy> {
  const { forward, close: closeUpstream } = upstreamClient(target);
  const random = mulberry32(spec.seed);
  const stats: FaultStats = {
    calls: 0,
    byOp: {},
    faults: Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>,
    inProgressEchoes: 0,
  };
  const lag = spec.lagMs > 0 ? new LagView(spec.lagMs) : undefined;
  /** writes are forwarded one at a time while lag is simulated (their images then come in commit order) */
  const writeLock = new Lock();
  /**
   * ClientRequestToken -> until when its retries are answered TransactionInProgress, and
   * the items it holds: single-item writes to them get TransactionConflictException (as
   * DynamoDB answers a write to an item of a transaction in flight). Other transactions
   * pass: the held transaction has in fact committed.
   */
  const inProgress = new Map<string, { until: number; keys: Set<string> }>();
  const held = (ids: string[]): boolean => {
    const now = Date.now();
    for (const [tok, p] of inProgress) {
      if (p.until <= now) inProgress.delete(tok);
      else if (ids.some((id) => p.keys.has(id))) return true;
    }
    return false;
  };

  /**
   * a side call to the upstream, signed like the request that caused it (DynamoDB Local keys
   * its databases by credentials); marked so a metering proxy behind (measure/meter/) does not bill it
   */
  const call = async (req: IncomingMessage, op: string, input: Json): Promise<Json> => {
    const r = await forward(
      { url: req.url, method: 'POST', headers: { ...req.headers, 'x-amz-target': `DynamoDB_20120810.${op}`, [SIDE_CALL_HEADER]: 'faults' } },
      Buffer.from(JSON.stringify(input)),
    );
    if (r.status !== 200) throw new Error(`${op} failed upstream: ${r.status} ${r.body.toString()}`);
    return JSON.parse(r.body.toString()) as Json;
  };

  /** consistent images of keys, by keyId */
  const images = async (req: IncomingMessage, keys: Array<{ table: string; key: WireItem }>): Promise<Map<string, WireItem | null>> => {
    const out = new Map<string, WireItem | null>();
    for (const k of keys) out.set(keyId(k.table, k.key), null);
    const byTable = new Map<string, WireItem[]>();
    for (const k of keys) byTable.set(k.table, [...(byTable.get(k.table) ?? []), k.key]);
    for (const [table, list] of byTable) {
      for (let i = 0; i < list.length; i += 100) {
        let pending: WireItem[] | undefined = list.slice(i, i + 100);
        while (pending?.length) {
          const r = (await call(req, 'BatchGetItem', { RequestItems: { [table]: { Keys: pending, ConsistentRead: true } } })) as {
            Responses?: Record<string, WireItem[]>;
            UnprocessedKeys?: Record<string, { Keys: WireItem[] }>;
          };
          for (const it of r.Responses?.[table] ?? []) out.set(keyId(table, it), it);
          pending = r.UnprocessedKeys?.[table]?.Keys;
        }
      }
    }
    return out;
  };

  /** forward a write; with lag on, one at a time, recording the images it leaves */
  const forwardWrite = async (req: IncomingMessage, body: Buffer, op: string, input: Json): Promise<Upstream> => {
    if (!lag) return forward(req, body);
    const keys = writtenKeys(op, input);
    return writeLock.run(async () => {
      const unknown = keys.filter((k) => !lag.known(keyId(k.table, k.key)));
      if (unknown.length) for (const [id, image] of await images(req, unknown)) lag.baseline(id, image);
      const res = await forward(req, body);
      if (res.status === 200) for (const [id, image] of await images(req, keys)) lag.record(id, image);
      return res;
    });
  };

  const pick = (op: string): FaultKind | undefined => {
    const kinds = applicable(op);
    if (!kinds.length) return undefined;
    const share = spec.rate / kinds.length;
    let x = random();
    for (const k of kinds) {
      const p = spec.rates[k] ?? share;
      if (x < p) return k;
      x -= p;
    }
    return undefined;
  };

  const correctRead = (op: string, input: Json, out: Json): Json => {
    if (!lag) return out;
    const eventual = input.ConsistentRead !== true;
    if ((op === 'Query' || op === 'Scan') && (input.IndexName || eventual)) {
      lag.correctList(String(input.TableName), input as never, out as never);
    } else if (op === 'GetItem' && eventual) {
      const asOf = lag.asOf(String(input.TableName), input.Key as WireItem);
      if (asOf !== undefined) {
        if (asOf) out.Item = asOf;
        else delete out.Item;
      }
    } else if (op === 'BatchGetItem') {
      for (const [table, req] of Object.entries((input.RequestItems ?? {}) as Record<string, Json>)) {
        if (req.ConsistentRead === true) continue;
        const responses = ((out.Responses as Record<string, WireItem[]> | undefined) ??= {});
        const got = new Map((responses[table] ?? []).map((it) => [keyId(table, it), it]));
        for (const key of (req.Keys ?? []) as WireItem[]) {
          const asOf = lag.asOf(table, key);
          if (asOf === undefined) continue;
          if (asOf) got.set(keyId(table, key), asOf);
          else got.delete(keyId(table, key));
        }
        responses[table] = [...got.values()];
      }
    }
    return out;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const { body, op, input } = await readRequest(req);
    stats.calls++;
    stats.byOp[op] = (stats.byOp[op] ?? 0) + 1;
    const kind = pick(op);
    if (kind) stats.faults[kind]++;
    if (kind === 'latency') await new Promise((r) => setTimeout(r, random() * spec.latencyMs));

    const isWrite = op === TX_WRITE || SINGLE_WRITES.has(op);
    const token = op === TX_WRITE ? (input.ClientRequestToken as string | undefined) : undefined;
    const touched = isWrite ? writtenKeys(op, input).map((k) => keyId(k.table, k.key)) : [];
    // an injected transaction still "in progress": its retries and writes to its items wait
    if (token && (inProgress.get(token)?.until ?? 0) > Date.now()) {
      stats.inProgressEchoes++;
      return reply(res, 400, awsError('TransactionInProgressException', 'Transaction is in progress'));
    }
    if (op !== TX_WRITE && touched.length && held(touched)) {
      stats.inProgressEchoes++;
      return reply(res, 400, awsError('TransactionConflictException', 'Transaction is ongoing for the item'));
    }

    switch (kind) {
      case 'throttle':
        if (op === TX_WRITE && random() < 0.5) return reply(res, 400, cancellation(input, 'ThrottlingError', random()));
        return reply(
          res,
          400,
          random() < 0.5
            ? awsError('ThrottlingException', 'Rate of requests exceeds the allowed throughput.')
            : awsError('ProvisionedThroughputExceededException', 'The level of configured provisioned throughput for the table was exceeded.'),
        );
      case 'conflict':
        if (op === TX_WRITE) return reply(res, 400, cancellation(input, 'TransactionConflict', random()));
        return reply(res, 400, awsError('TransactionConflictException', 'Transaction is ongoing for the item'));
      case 'error':
        if (random() < 0.5) return reply(res, 500, awsError('InternalServerError', 'Internal server error'));
        await (isWrite ? forwardWrite(req, body, op, input) : forward(req, body));
        return reply(res, 500, awsError('InternalServerError', 'Internal server error'));
      case 'inprogress': {
        const up = await forwardWrite(req, body, op, input);
        if (up.status !== 200 || !token) return reply(res, up.status, up.body, up.headers);
        inProgress.set(token, { until: Date.now() + spec.inProgressMs, keys: new Set(touched) });
        return reply(res, 400, awsError('TransactionInProgressException', 'Transaction is in progress'));
      }
      case 'lost':
        await (isWrite ? forwardWrite(req, body, op, input) : forward(req, body));
        req.socket.destroy();
        return;
    }
    const up = await (isWrite ? forwardWrite(req, body, op, input) : forward(req, body));
    if (up.status === 200 && lag && READS.has(op)) {
      const out = correctRead(op, input, JSON.parse(up.body.toString()) as Json);
      return reply(res, 200, Buffer.from(JSON.stringify(out)), up.headers);
    }
    return reply(res, up.status, up.body, up.headers);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      if (!res.headersSent && !res.destroyed) reply(res, 500, awsError('InternalServerError', `fault proxy: ${(e as Error).message}`));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  return {
    endpoint: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    port,
    spec,
    stats,
    lag,
    setSpec(next) {
      Object.assign(spec, { ...next, lagMs: spec.lagMs });
    },
    stop: async () => {
      const closed = closeServers([server]);
      closeUpstream();
      await closed;
    },
  };
}

/** a TransactionCanceledException naming `code` on one action (None on the others) */
function cancellation(input: Json, code: 'TransactionConflict' | 'ThrottlingError', x: number): Buffer {
  const n = Math.max(1, ((input.TransactItems ?? []) as unknown[]).length);
  const at = Math.floor(x * n);
  const reasons = Array.from({ length: n }, (_, i) =>
    i === at
      ? { Code: code, Message: code === 'TransactionConflict' ? 'Transaction is ongoing for the item' : 'Throughput exceeds the current capacity' }
      : { Code: 'None' },
  );
  return awsError(
    'TransactionCanceledException',
    `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
    {
      CancellationReasons: reasons,
    },
  );
}
