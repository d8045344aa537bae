/**
 * `npm start -- --containers K`: K local "Lambda containers" (./container.ts, one child
 * process each, with its own module state and provider snapshot) serving the same
 * handlers behind a round-robin front on the usual ports (Placement and bare metal), as
 * API Gateway spreads requests over a function's warm containers. Container 0 runs the
 * maintenance timer. Each container takes at most `concurrency` requests at a time
 * (default 1, as a Lambda container does; 0: no limit): a request finding every container
 * busy waits at the front for the next free one.
 *
 * Children die with the parent: each exits when its IPC channel to the parent closes
 * (whatever ended the parent), and the parent kills them when it exits or stops. They bind
 * port 0, so only the front's ports are fixed, and those are closed by stop().
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ContainerReady, ContainerSpec } from './container.js';
import { closeServers } from './servers.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface ContainerOptions {
  count: number;
  /** requests one container takes at a time (0: no limit) */
  concurrency: number;
  host: string;
  placementPort: number;
  baremetalPort: number;
  maintenanceInterval: number;
  /** the children's environment (DDB_ENDPOINT, TABLE_NAME, ...), on top of this process's */
  env: Record<string, string | undefined>;
  /** drop the children's output instead of passing it on */
  quiet?: boolean;
  /** the API's answer to a request Node's HTTP parser rejects (as the adapter gives it) */
  malformed?: { placement?: (code: string) => { status: number; headers: Record<string, string>; body: string } };
}

export interface ContainerInfo extends ContainerReady {
  child: ChildProcess;
  alive: boolean;
}

export interface ContainerSet {
  containers: ContainerInfo[];
  servers: Server[];
  placementUrl: string;
  baremetalUrl: string;
  /** requests dispatched per container */
  dispatched: number[];
  /**
   * A deploy: start a new process for every container (each with nothing loaded, as a new
   * Lambda container), then put them in the old ones' places and stop those. Requests
   * dispatched from then on reach the new ones.
   */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Round robin over the containers, at most `limit` requests in each (0: no limit). */
export class Dispatcher {
  readonly inflight: number[];
  readonly dispatched: number[];
  private next = 0;
  private readonly waiting: Array<(i: number) => void> = [];
  constructor(
    private readonly alive: () => boolean[],
    private readonly limit: number,
  ) {
    const n = alive().length;
    this.inflight = new Array(n).fill(0);
    this.dispatched = new Array(n).fill(0);
  }

  private pick(): number {
    const alive = this.alive();
    for (let k = 0; k < alive.length; k++) {
      const i = (this.next + k) % alive.length;
      if (alive[i] && (this.limit === 0 || this.inflight[i]! < this.limit)) {
        this.next = i + 1;
        return i;
      }
    }
    return -1;
  }

  /** a container for one request (waits while every container is busy); -1 when none is alive */
  acquire(): Promise<number> {
    if (!this.alive().some(Boolean)) return Promise.resolve(-1);
    const i = this.pick();
    if (i >= 0) {
      this.inflight[i]!++;
      this.dispatched[i]!++;
      return Promise.resolve(i);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(i: number): void {
    this.inflight[i]!--;
    while (this.waiting.length) {
      const j = this.pick();
      if (j < 0) break;
      this.inflight[j]!++;
      this.dispatched[j]!++;
      this.waiting.shift()!(j);
    }
    if (!this.alive().some(Boolean)) for (const w of this.waiting.splice(0)) w(-1);
  }
}

function startChild(spec: ContainerSpec, o: ContainerOptions): Promise<ContainerInfo> {
  const child = fork(join(ROOT, 'local', 'container.ts'), [JSON.stringify(spec)], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...o.env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let early = '';
  const pass = (stream: NodeJS.ReadableStream | null, to: NodeJS.WriteStream) => {
    stream?.on('data', (d: Buffer) => {
      if (early.length < 8000) early += String(d);
      if (!o.quiet) to.write(d);
    });
  };
  pass(child.stdout, process.stdout);
  pass(child.stderr, process.stderr);
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`container ${spec.index} exited during startup (${code}):\n${early}`));
    child.once('exit', onExit);
    child.once('message', (m: ContainerReady) => {
      child.off('exit', onExit);
      const info: ContainerInfo = { ...m, child, alive: true };
      child.once('exit', () => (info.alive = false));
      resolve(info);
    });
  });
}

function frontServer(
  which: 'placementPort' | 'baremetalPort',
  containers: ContainerInfo[],
  dispatcher: Dispatcher,
  agent: Agent,
  malformed?: (code: string) => { status: number; headers: Record<string, string>; body: string },
): Server {
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const i = await dispatcher.acquire();
    if (i < 0) {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'Internal Server Error' }));
      return;
    }
    let released = false;
    const release = () => {
      if (!released) {
        released = true;
        dispatcher.release(i);
      }
    };
    const c = containers[i]!;
    const up = httpRequest({ host: '127.0.0.1', port: c[which], method: req.method, path: req.url, headers: req.headers, agent }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      ur.pipe(res);
      ur.on('end', release);
      ur.on('close', release);
      ur.on('error', release);
    });
    up.on('error', () => {
      release();
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'Internal Server Error' }));
    });
    req.pipe(up);
  });
  server.on('clientError', (err: Error & { code?: string }, socket) => {
    if (!socket.writable) return socket.destroy();
    const r = malformed?.(err.code ?? '') ?? { status: 400, headers: { 'content-type': 'application/json' }, body: '{"message":"Bad Request"}' };
    const head = [
      `HTTP/1.1 ${r.status} Bad Request`,
      ...Object.entries({ ...r.headers, 'content-length': String(Buffer.byteLength(r.body)), connection: 'close' }).map(([k, v]) => `${k}: ${v}`),
    ];
    socket.end(`${head.join('\r\n')}\r\n\r\n${r.body}`);
  });
  server.keepAliveTimeout = 65_000;
  return server;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
}

const children = new Set<ChildProcess>();
let exitHook = false;
function killOnExit(child: ChildProcess): void {
  children.add(child);
  child.once('exit', () => children.delete(child));
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const c of children) c.kill('SIGKILL');
    });
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });
}

/** how long a replaced container keeps serving what it was given before it is stopped */
const RESTART_GRACE_MS = 3000;

export async function startContainers(o: ContainerOptions): Promise<ContainerSet> {
  const count = Math.max(1, Math.floor(o.count));
  const started = await Promise.allSettled(
    Array.from({ length: count }, (_, index) =>
      startChild({ index, host: '127.0.0.1', maintenanceInterval: index === 0 ? o.maintenanceInterval : 0 }, o),
    ),
  );
  const containers = started.filter((s): s is PromiseFulfilledResult<ContainerInfo> => s.status === 'fulfilled').map((s) => s.value);
  for (const c of containers) killOnExit(c.child);
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await Promise.all(containers.map((c) => stopChild(c.child)));
    throw failed.reason;
  }
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const dispatcher = new Dispatcher(() => containers.map((c) => c.alive), o.concurrency);
  const servers: Server[] = [];
  const stop = async () => {
    await closeServers(servers);
    agent.destroy();
    await Promise.all(containers.map((c) => stopChild(c.child)));
  };
  try {
    const p = frontServer('placementPort', containers, dispatcher, agent, o.malformed?.placement);
    servers.push(p);
    await listen(p, o.placementPort, o.host);
    const b = frontServer('baremetalPort', containers, dispatcher, agent);
    servers.push(b);
    await listen(b, o.baremetalPort, o.host);
  } catch (e) {
    await stop();
    throw e;
  }
  const url = (s: Server) => `http://${o.host}:${(s.address() as { port: number }).port}`;
  const restart = async () => {
    const fresh = await Promise.all(
      containers.map((_, index) => startChild({ index, host: '127.0.0.1', maintenanceInterval: index === 0 ? o.maintenanceInterval : 0 }, o)),
    );
    const old = containers.splice(0, containers.length, ...fresh);
    for (const c of fresh) killOnExit(c.child);
    // the requests the old ones are serving end first (as Lambda lets an old version's invocations finish)
    await new Promise((r) => setTimeout(r, RESTART_GRACE_MS));
    await Promise.all(old.map((c) => stopChild(c.child)));
  };
  return { containers, servers, placementUrl: url(servers[0]!), baremetalUrl: url(servers[1]!), dispatched: dispatcher.dispatched, restart, stop };
}
