/**
 * What the local DynamoDB proxies (the fault injector ./ddb-faults.ts and the meter
 * measure/meter/) share: forwarding a request to the DynamoDB behind them as it came,
 * and a mutex for writes they must see one at a time.
 */
import { Agent, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';

export type Json = Record<string, unknown>;

/** an answer of the DynamoDB behind the proxy */
export interface Upstream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Forwards requests to `target` over kept-alive connections; `close()` ends them. */
export function upstreamClient(target: string): {
  forward: (req: Pick<IncomingMessage, 'url' | 'method' | 'headers'>, body: Buffer) => Promise<Upstream>;
  close: () => void;
} {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const forward = (req: Pick<IncomingMessage, 'url' | 'method' | 'headers'>, body: Buffer): Promise<Upstream> =>
    new Promise((resolve, reject) => {
      const headers = { ...req.headers, host: upstream.host, 'content-length': String(body.length) };
      const r = httpRequest({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method ?? 'POST', headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      r.on('error', reject);
      r.end(body);
    });
  return { forward, close: () => agent.destroy() };
}

/** a simple mutex: what it runs, runs one at a time, in the order asked */
export class Lock {
  private tail: Promise<void> = Promise.resolve();
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const prev = this.tail;
    let release!: () => void;
    this.tail = new Promise((r) => (release = r));
    await prev;
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

/** A request to the proxy: its body, DynamoDB operation (from X-Amz-Target) and parsed input ({} if it is not JSON: forwarded as it is). */
export async function readRequest(req: IncomingMessage): Promise<{ body: Buffer; op: string; input: Json }> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = Buffer.concat(chunks);
  const op = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
  let input: Json = {};
  try {
    input = body.length ? (JSON.parse(body.toString()) as Json) : {};
  } catch {
    // not the proxy's to judge
  }
  return { body, op, input };
}

/** Answer as DynamoDB does (its JSON content type unless `headers` say otherwise); hop-by-hop headers are not copied. */
export function reply(res: ServerResponse, status: number, body: Buffer, headers: Record<string, string | string[] | undefined> = {}): void {
  if (res.destroyed) return;
  const h: Record<string, string | string[]> = { 'content-type': 'application/x-amz-json-1.0' };
  for (const [k, v] of Object.entries(headers))
    if (v !== undefined && k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection') h[k] = v;
  h['content-length'] = String(body.length);
  res.writeHead(status, h);
  res.end(body);
}
