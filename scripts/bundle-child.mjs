#!/usr/bin/env node
/**
 * One Lambda bundle run as Lambda runs it, in this fresh process (scripts/invoke.ts
 * --template starts it with the function's deployed environment, NODE_OPTIONS included,
 * on the Node binary it is given): import the bundle (the init phase), call its handler
 * once with the event, and print one JSON line on stdout — the result, and how long the
 * module load and the first answer took (the cold start, as far as this machine can
 * show it). Plain JavaScript, so any Node runs it without a loader.
 *
 *   BERTH_BUNDLE=/path/index.mjs BERTH_EVENT='{…}' BERTH_FUNCTION=name node scripts/bundle-child.mjs
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const name = process.env.BERTH_FUNCTION ?? 'function';
const context = {
  callbackWaitsForEmptyEventLoop: false,
  functionName: name,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
  memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? '1024',
  awsRequestId: randomUUID(),
  logGroupName: `/aws/lambda/${name}`,
  logStreamName: 'local',
  getRemainingTimeInMillis: () => 29_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
};
// the function's own logs go to stderr; stdout carries the one result line
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr);
const t0 = performance.now();
let out;
try {
  const mod = await import(pathToFileURL(process.env.BERTH_BUNDLE).href);
  const loaded = performance.now();
  if (typeof mod.handler !== 'function') throw new Error('the bundle exports no handler');
  let result;
  let error;
  try {
    result = await mod.handler(JSON.parse(process.env.BERTH_EVENT ?? '{}'), context);
  } catch (e) {
    // what Lambda would report as the invocation's error (an authorizer's "unavailable", say)
    error = String(e?.message ?? e);
  }
  const answered = performance.now();
  out = {
    result: result ?? null,
    ...(error === undefined ? {} : { error }),
    node: process.version,
    moduleLoadMs: Math.round((loaded - t0) * 10) / 10,
    firstAnswerMs: Math.round((answered - loaded) * 10) / 10,
  };
} catch (e) {
  out = { loadError: String(e?.stack ?? e), node: process.version };
}
write(`${JSON.stringify(out)}\n`);
process.exit(0);
