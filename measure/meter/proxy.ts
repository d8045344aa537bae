/**
 * The metering DynamoDB proxy: an HTTP proxy between the handlers (the AWS SDK, pointed at
 * it) and a DynamoDB endpoint that does not check signatures (DynamoDB Local, LocalStack).
 * It forwards every call unchanged and records it (../ledger.ts): operation, table or
 * index, consistency, the partition and sort keys touched, item sizes, and the read and
 * write units AWS would bill by its documented rules (functions/store/ddb/units.ts: Query pages summed
 * then rounded, BatchGetItem items rounded one by one, missing items, transactions x2,
 * ConditionCheck, failed conditional writes, every global secondary index write).
 *
 * Write units need each written item's image before and after the write. Like the lag
 * simulation (local/ddb-lag.ts) the proxy forwards writes one at a time and keeps a shadow of
 * every item it has seen written: the image before a write is the shadow's (read with a
 * consistent BatchGetItem the first time a key is met), the image after it is the Put's
 * item, nothing for a Delete, and a consistent read after an Update. So a Query or
 * BatchGet billed on what it returned and a write billed on its images both follow
 * "whatever the code does", whatever the item layout.
 *
 * Reads are billed on the items DynamoDB evaluated, not on what a projection or a filter
 * left: a read with a ProjectionExpression, a FilterExpression or Select is read again
 * without them (a side call, not billed) to size what was evaluated.
 *
 * Who made a call: the local containers (local/container.ts) add an `x-berth-acct` header
 * naming the container, the request and its type; calls without one are recorded as
 * unattributed. Calls carrying `x-berth-side-call` (the fault injector's own reads) are
 * forwarded and not recorded. Composable with the fault injector: handlers -> fault
 * injector -> meter -> DynamoDB (local/start.ts), so the meter sees what reached DynamoDB.
 *
 * This module is the proxy itself (the server, what is billed and what is passed);
 * ./images.ts holds what it knows of the table, ./reads.ts and ./writes.ts the billing.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Lock, readRequest, reply, upstreamClient, type Json, type Upstream } from '../../local/ddb-upstream.js';
import { closeServers } from '../../local/servers.js';
import { ACCT_HEADER, SIDE_CALL_HEADER, decodeAttribution } from '../../local/attribution.js';
import type { CallRecord } from '../ledger.js';
import { meterImages, type MeterContext, type MeterStats } from './images.js';
import { billRead } from './reads.js';
import { billWrite } from './writes.js';

export type { MeterStats };

export interface MeterProxy {
  endpoint: string;
  port: number;
  /** every call recorded since the start or the last reset() */
  records: CallRecord[];
  stats: MeterStats;
  /** called with every record as it is made */
  onRecord?: (r: CallRecord) => void;
  /** forget the records (the shadow of item images stays) */
  reset(): void;
  stop(): Promise<void>;
}

const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);
const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

export async function startMeterProxy(target: string, opts: { port?: number; host?: string } = {}): Promise<MeterProxy> {
  const { forward, close: closeUpstream } = upstreamClient(target);
  const stats: MeterStats = { calls: 0, sideCalls: 0, passed: 0 };
  const records: CallRecord[] = [];
  const writeLock = new Lock();
  let seq = 0;

  const record = (r: Omit<CallRecord, 'seq'>) => {
    const full = { seq: ++seq, ...r };
    records.push(full);
    stats.calls++;
    meter.onRecord?.(full);
  };
  const ctx: MeterContext = { forward, images: meterImages(forward, stats), record, tokens: new Map() };

  const send = (res: ServerResponse, up: Upstream) => reply(res, up.status, up.body, up.headers);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const { body, op, input } = await readRequest(req);
    if (req.headers[SIDE_CALL_HEADER] || (!READS.has(op) && !WRITES.has(op))) {
      stats.passed++;
      return send(res, await forward(req, body));
    }
    if (WRITES.has(op)) return send(res, await writeLock.run(() => billWrite(ctx, req, body, op, input)));
    const t = Date.now();
    const up = await forward(req, body);
    if (up.status === 200) {
      try {
        await billRead(ctx, req, op, input, JSON.parse(up.body.toString()) as Json, t);
      } catch (e) {
        process.stderr.write(`[berth] meter: could not bill a ${op}: ${(e as Error).message}\n`);
      }
    } else {
      record({
        t,
        end: Date.now(),
        op,
        table: String(input.TableName ?? ''),
        who: decodeAttribution(req.headers[ACCT_HEADER]),
        outcome: 'error',
        read: 0,
        write: 0,
        indexWrite: 0,
        keys: [],
      });
    }
    return send(res, up);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      if (!res.headersSent && !res.destroyed) {
        const msg = JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: `meter: ${(e as Error).message}` });
        res.writeHead(500, { 'content-type': 'application/x-amz-json-1.0', 'content-length': String(Buffer.byteLength(msg)) });
        res.end(msg);
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  const meter: MeterProxy = {
    endpoint: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    port,
    records,
    stats,
    reset() {
      records.length = 0;
    },
    stop: async () => {
      const closed = closeServers([server]);
      closeUpstream();
      await closed;
    },
  };
  return meter;
}
