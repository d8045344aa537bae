/**
 * One local "Lambda container": a child process (started by ./containers.ts) with its own
 * module state — its own DynamoDB client, provider snapshot, caches — serving both APIs'
 * handlers on ports of its own, as each Lambda container in AWS holds its own. The parent's
 * round-robin front sends it requests.
 *
 * Each request runs in its own accounting context (AsyncLocalStorage):
 *  - every DynamoDB call the handlers make carries an `x-berth-acct` header naming this
 *    container, the request (the caller's x-berth-request-id, else a new id) and its type
 *    (the caller's x-berth-label, else "METHOD /route/template"), so a metering proxy
 *    (measure/meter/) accounts each call to a request;
 *  - the bytes the handlers write to stdout/stderr (their logs) are counted;
 *  - the answer carries x-berth-container (this process), x-berth-cpu-us (the process's CPU
 *    time while the handler ran: exact when the front gives this container one request at
 *    a time, as Lambda does) and x-berth-log-bytes.
 * Calls outside a request are labelled `maintenance` (the timer, container 0 only) or
 * `background`. The process exits when its parent goes (the IPC channel closes).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { LambdaHandler } from '../functions/http/family.js';
import { CONTAINER_HEADER, CPU_HEADER, LABEL_HEADER, LOG_HEADER, REQUEST_ID_HEADER, type Attribution } from './attribution.js';
import { attributeCalls } from './attribution.js';

export interface ContainerSpec {
  index: number;
  host: string;
  /** run the maintenance function every this many seconds (0: never) */
  maintenanceInterval: number;
}

/** what a container tells its parent once it serves */
export interface ContainerReady {
  type: 'ready';
  id: string;
  pid: number;
  placementPort: number;
  baremetalPort: number;
}

interface Ctx {
  attr: Attribution;
  logBytes: number;
}

const als = new AsyncLocalStorage<Ctx>();

/** count what is written to stdout/stderr within a request (its log bytes) */
function countOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (...a: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      const ctx = als.getStore();
      if (ctx) ctx.logBytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : ((chunk as Uint8Array)?.length ?? 0);
      return write(chunk, ...rest);
    }) as typeof stream.write;
  }
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as ContainerSpec;
  const id = `c${spec.index}-${process.pid}`;
  countOutput();
  const { resetConfig } = await import('../functions/config.js');
  resetConfig();
  const { ddbCallStacks } = await import('../functions/store/ddb/client.js');
  const { labelSnapshotWork, snapshotWork } = await import('../functions/store/placement/snapshot-stats.js');
  labelSnapshotWork();
  const background = (label: string, request = label): Attribution => ({ container: id, request, label, family: label });
  // every DynamoDB call names its request (a header DynamoDB ignores; the metering proxy reads it);
  // a snapshot's whole load or catch-up is named apart from the request that started it
  // (`snapshot:cold`, `snapshot:resync`, `snapshot:catch-up`, request `<id>/<work>`): a cost
  // between requests. The maintenance function's own snapshot stays maintenance's.
  for (const c of ddbCallStacks())
    attributeCalls(c, () => {
      const a = als.getStore()?.attr ?? background('background');
      const work = snapshotWork.getStore();
      return work && a.label !== 'maintenance' ? { ...a, request: `${a.request}/${work}`, label: `snapshot:${work}` } : a;
    });
  const { servePlacement, serveBaremetal } = await import('./apis.js');
  const wrap =
    (api: string, family: string, handler: LambdaHandler): LambdaHandler =>
    async (event, context) => {
      const h = event.headers ?? {};
      const method = event.requestContext?.http?.method ?? 'GET';
      const route = event.routeKey === '$default' ? '$default' : event.routeKey.replace(/^ANY /, '');
      const ctx: Ctx = {
        attr: {
          container: id,
          request: h[REQUEST_ID_HEADER] ?? randomUUID(),
          label: h[LABEL_HEADER] ?? `${method} ${route}`,
          family: `${api}-${family}`,
        },
        logBytes: 0,
      };
      const cpu0 = process.cpuUsage();
      const result = await als.run(ctx, () => handler(event, context));
      const cpu = process.cpuUsage(cpu0);
      result.headers = { ...result.headers, [CONTAINER_HEADER]: id, [CPU_HEADER]: String(cpu.user + cpu.system), [LOG_HEADER]: String(ctx.logBytes) };
      return result;
    };
  const servers: Server[] = [await servePlacement(0, spec.host, wrap), await serveBaremetal(0, spec.host, wrap)];
  if (spec.maintenanceInterval > 0) {
    const { runMaintenance } = await import('../functions/maintenance/handler.js');
    let n = 0;
    const timer = setInterval(() => {
      const attr = background('maintenance', `maintenance-${++n}`);
      als
        .run({ attr, logBytes: 0 }, () => runMaintenance())
        .catch((e: Error) => process.stderr.write(`[berth] maintenance failed: ${e.stack ?? e}\n`));
    }, spec.maintenanceInterval * 1000);
    timer.unref();
  }
  const port = (s: Server) => (s.address() as { port: number }).port;
  const ready: ContainerReady = { type: 'ready', id, pid: process.pid, placementPort: port(servers[0]!), baremetalPort: port(servers[1]!) };
  process.send?.(ready);
  // the parent is gone (or stopped us): go too
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => {
    for (const s of servers) s.closeAllConnections?.();
    process.exit(0);
  });
}

main().catch((e) => {
  process.stderr.write(`[berth] container failed to start: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
