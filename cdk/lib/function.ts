/**
 * Every Lambda of Berth is built by this construct, so runtime, architecture, bundling
 * (esbuild, locally, no Docker), logging, tracing and table access are decided once.
 * The deployment-wide settings (log level, sampling, source maps) come from the stack
 * (setFunctionSettings; `-c logLevel`, `-c logSampleRate`, `-c sourceMaps`), defaulting
 * to FUNCTION_DEFAULTS.
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { functionNetwork, type NetworkRole } from './network.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The Lambda runtime of every Berth function: the newest Node.js Lambda offers
 * (nodejs22.x is deprecated on 30 April 2027). Node 24 drops callback-style handlers;
 * every Berth handler is async. The bundles target the same Node version, and the
 * bundle runner (`npm run invoke -- --template …`) runs them on it
 * (test/integration/cli/bundles.test.ts).
 */
export const LAMBDA_RUNTIME = lambda.Runtime.NODEJS_24_X;
/** esbuild's target for that runtime */
export const BUNDLE_TARGET = 'node24';

export type TableAccess = 'none' | 'read' | 'readwrite';

/** Powertools Logger's levels (functions/observability/powertools.ts reads LOG_LEVEL) */
export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** What a deployment decides for all of its functions at once. */
export interface FunctionSettings {
  /** application log level (LOG_LEVEL); `npm start` keeps functions/config.ts's INFO */
  logLevel: LogLevel;
  /**
   * share of invocations that log at DEBUG whatever the level (LOG_SAMPLE_RATE,
   * Powertools Logger's sampling): their access lines and details, at a fraction of the cost
   */
  logSampleRate: number;
  /**
   * ship source maps in the bundles and turn them on (--enable-source-maps): readable
   * stack traces, at the price of larger bundles and a slower module load (a forest
   * family's 288-390 ms became 636-827 ms with them)
   */
  sourceMaps: boolean;
}

export const FUNCTION_DEFAULTS: Readonly<FunctionSettings> = {
  // a request writes nothing unless it fails (5xx: an ERROR access line) or is sampled
  logLevel: 'WARN',
  logSampleRate: 0.01,
  sourceMaps: false,
};

export class FunctionSettingsError extends Error {}

const settingsOfStack = new WeakMap<Stack, FunctionSettings>();

/** Fix the settings of every BerthFunction in `stack` (call before building them); unset ones take FUNCTION_DEFAULTS. */
export function setFunctionSettings(stack: Stack, settings: Partial<FunctionSettings> = {}): FunctionSettings {
  const s = { ...FUNCTION_DEFAULTS, ...Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined)) } as FunctionSettings;
  if (!LOG_LEVELS.includes(s.logLevel))
    throw new FunctionSettingsError(`logLevel ${JSON.stringify(s.logLevel)} is not one of ${LOG_LEVELS.join(', ')}`);
  if (!(Number.isFinite(s.logSampleRate) && s.logSampleRate >= 0 && s.logSampleRate <= 1)) {
    throw new FunctionSettingsError(`logSampleRate ${JSON.stringify(s.logSampleRate)} must be a number from 0 to 1`);
  }
  settingsOfStack.set(stack, s);
  return s;
}

/**
 * How a release reaches the forest functions' traffic (`-c forestDeploy`; docs/cost.md,
 * "Deploying a large cloud"): `all-at-once` (CloudFormation's own update: every container of
 * the new release starts, and loads its forest, within seconds), or `linear` (a CodeDeploy
 * traffic shift on the `live` alias, 10 % more of the traffic every minute: a tenth of the
 * cold loads at each step, so a deploy's burst on the change log's partitions is a tenth).
 */
export const FOREST_DEPLOYS = ['all-at-once', 'linear'] as const;
export type ForestDeploy = (typeof FOREST_DEPLOYS)[number];

/**
 * The forest functions' memory (MB: Lambda's 128–10,240; a forest family keeps all but 384
 * MB as heap, so at least 1,024), provisioned concurrency (a whole number; 0 = none) and
 * how a release reaches them (FOREST_DEPLOYS).
 */
export function validateForest(f: { memoryMb?: number; provisionedConcurrency?: number; deploy?: string } = {}): void {
  if (f.deploy !== undefined && !(FOREST_DEPLOYS as readonly string[]).includes(f.deploy)) {
    throw new FunctionSettingsError(`forestDeploy ${JSON.stringify(f.deploy)} must be one of ${FOREST_DEPLOYS.join(', ')}`);
  }
  const m = f.memoryMb;
  if (m !== undefined && !(Number.isInteger(m) && m >= 1024 && m <= 10240)) {
    throw new FunctionSettingsError(`forestMemoryMb ${JSON.stringify(m)} must be a whole number of MB from 1024 to 10240 (Lambda's maximum)`);
  }
  const pc = f.provisionedConcurrency;
  if (pc !== undefined && !(Number.isInteger(pc) && pc >= 0 && pc <= 1000)) {
    throw new FunctionSettingsError(`provisionedConcurrency ${JSON.stringify(pc)} must be a whole number from 0 to 1000`);
  }
}

export function functionSettings(scope: Construct): FunctionSettings {
  return settingsOfStack.get(Stack.of(scope)) ?? { ...FUNCTION_DEFAULTS };
}

export interface BerthFunctionProps {
  /** path of the entry file, relative to the repository root */
  entry: string;
  description: string;
  table: dynamodb.ITableV2;
  access: TableAccess;
  environment?: Record<string, string>;
  memoryMb?: number;
  timeout?: Duration;
  /**
   * the function keeps the provider forest in memory: its V8 heap may use all but 384 MB
   * of the function's memory (Node's default would stop well short of it)
   */
  largeHeap?: boolean;
  /** pre-initialised execution environments (an alias `live` with provisioned concurrency); 0 or unset: none */
  provisionedConcurrency?: number;
  /** `linear`: a release reaches the function through CodeDeploy, 10 % of its traffic more every minute (FOREST_DEPLOYS) */
  deploy?: ForestDeploy;
  /** at most this many instances at once (reserved concurrency); unset: the account's shared pool */
  reservedConcurrency?: number;
  /** in a VPC (cdk/lib/network.ts, `-c vpc…`): which security group it gets (default 'aws': DynamoDB and the endpoints) */
  network?: NetworkRole;
}

export class BerthFunction extends Construct {
  readonly fn: NodejsFunction;
  /** the alias `live` (provisioned concurrency, a gradual deploy), when configured: what API routes should invoke */
  alias: lambda.Alias | undefined;
  /** the CodeDeploy deployment group shifting `live` to a new release (`deploy: 'linear'`) */
  deployment: codedeploy.LambdaDeploymentGroup | undefined;

  /** what an integration invokes: the provisioned alias when there is one */
  get target(): lambda.IFunction {
    return this.alias ?? this.fn;
  }

  constructor(scope: Construct, id: string, props: BerthFunctionProps) {
    super(scope, id);
    // a missing entry is a broken build, never a function silently left out
    if (!existsSync(join(ROOT, props.entry))) throw new Error(`${id}: entry ${props.entry} does not exist`);
    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const settings = functionSettings(this);
    const memoryMb = props.memoryMb ?? 1024;
    const nodeOptions = [
      ...(settings.sourceMaps ? ['--enable-source-maps'] : []),
      ...(props.largeHeap ? [`--max-old-space-size=${memoryMb - 384}`] : []),
    ];
    // in the stack's VPC when there is one (setFunctionNetwork), with its role's security group
    const placement = functionNetwork(this)?.placement(props.network ?? 'aws');
    this.fn = new NodejsFunction(this, 'Fn', {
      ...placement,
      entry: join(ROOT, props.entry),
      handler: 'handler',
      description: props.description,
      runtime: LAMBDA_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: memoryMb,
      timeout: props.timeout ?? Duration.seconds(29),
      reservedConcurrentExecutions: props.reservedConcurrency,
      tracing: lambda.Tracing.ACTIVE,
      logGroup,
      // Text, not JSON: the JSON format brings Lambda's own log-level filter (INFO unless
      // set), handed to the function as AWS_LAMBDA_LOG_LEVEL, which Powertools Logger
      // obeys over LOG_LEVEL and over sampling. The application's lines are Powertools
      // JSON either way; only Lambda's START/END/REPORT lines stay text.
      loggingFormat: lambda.LoggingFormat.TEXT,
      environment: {
        ...(nodeOptions.length ? { NODE_OPTIONS: nodeOptions.join(' ') } : {}),
        TABLE_NAME: props.table.tableName,
        AUTH_STRATEGY: 'authorizer',
        LOG_LEVEL: settings.logLevel,
        LOG_SAMPLE_RATE: String(settings.logSampleRate),
        ...props.environment,
      },
      bundling: {
        format: OutputFormat.ESM,
        target: BUNDLE_TARGET,
        minify: true,
        sourceMap: settings.sourceMaps,
        mainFields: ['module', 'main'],
        forceDockerBundling: false,
        // bundle the SDK too: measured faster cold starts than the runtime's copy
        externalModules: [],
        banner: "import { createRequire } from 'module';const require = createRequire(import.meta.url);",
      },
    });
    const provisioned = props.provisionedConcurrency && props.provisionedConcurrency > 0 ? props.provisionedConcurrency : undefined;
    if (provisioned || props.deploy === 'linear') {
      this.alias = this.fn.addAlias('live', { provisionedConcurrentExecutions: provisioned });
    }
    if (props.deploy === 'linear' && this.alias) {
      // CloudFormation's update of the alias waits for the shift (UpdatePolicy
      // CodeDeployLambdaAliasUpdate): the stack's DeployFinished runs after the last of them
      this.deployment = new codedeploy.LambdaDeploymentGroup(this, 'Deploy', {
        alias: this.alias,
        deploymentConfig: codedeploy.LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_1MINUTE,
      });
      Validations.of(this.deployment).acknowledge({
        id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
        reason: "CodeDeploy's own managed role for Lambda traffic shifting: it may only update aliases and invoke hooks named CodeDeployHook_*.",
      });
    }
    if (props.access === 'read') props.table.grantReadData(this.fn);
    if (props.access === 'readwrite') props.table.grantReadWriteData(this.fn);
  }
}
