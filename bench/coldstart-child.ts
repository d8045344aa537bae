/**
 * A fresh process for the coldstart scenario (bench/scenarios/coldstart.ts): Placement's
 * real handlers behind the local adapter, on the table the parent loaded, with AWS's
 * settings (6 MB answers, 1,000 candidates at most). It prints one JSON line when it
 * listens; every line "stats" on stdin is answered with its memory and snapshot figures (after
 * a full collection), every line "cpu" with the CPU time it has used so far.
 */
import './env.js';
import { createInterface } from 'node:readline';

const { servePlacement } = await import('../local/apis.js');
const { snapshot } = await import('../functions/store/placement/snapshot.js');
const server = await servePlacement(0);
const port = (server.address() as { port: number }).port;
process.stdout.write(`${JSON.stringify({ ready: true, port })}\n`);

/** CPU time this process has used, ms (all its threads: V8's GC helpers and libuv's pool too) */
const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === 'cpu') {
    process.stdout.write(`${JSON.stringify({ cpu: cpuMs() })}\n`);
    return;
  }
  if (line.trim() !== 'stats') return;
  globalThis.gc?.();
  const m = process.memoryUsage();
  const s = snapshot().stats;
  process.stdout.write(
    `${JSON.stringify({ stats: { heapMb: m.heapUsed / 1048576, rssMb: m.rss / 1048576, snapshot: s, providers: snapshot().forest.size } })}\n`,
  );
});
process.stdin.on('end', () => {
  server.close();
  process.exit(0);
});
