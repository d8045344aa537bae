/**
 * What the local DynamoDB proxies (the fault injector ./ddb-faults.ts and the meter
 * ./ddb-meter.ts) share: forwarding a request to the DynamoDB behind them as it came,
 * and a mutex for writes they must see one at a time.
 */
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';

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
