/**
 * The bare-metal (Ironic-compatible) part of Berth: its HTTP API (one Lambda per
 * resource family, routes from functions/baremetal/routes.ts), the two state machines
 * from their ASL files (definitionSubstitutions fill in the step Lambdas), the step
 * Lambdas, and least-privilege grants: each function gets only the DynamoDB actions
 * and the state machine it uses.
 */
import { Arn, ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import {
  HttpJwtAuthorizer,
  HttpLambdaAuthorizer,
  type HttpJwtAuthorizerProps,
  type HttpLambdaAuthorizerProps,
} from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { RemovalPolicy } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BAREMETAL_DEFAULT_FAMILY, BAREMETAL_FAMILIES, BAREMETAL_ROUTES } from '../../functions/baremetal/routes.js';
import { MACHINES, STEPS, stepEntry } from '../../functions/conductor/machines.js';
import type { Machine } from '../../functions/conductor/executor.js';
import { BerthFunction, ROOT } from './function.js';
import { acknowledgePublicRoute } from './nag.js';
import { BAREMETAL_PLACEMENT_ACCESS, baremetalFamilyRules, baremetalRules, grantTableAccess, type AccessRule } from './permissions.js';
import { STATE_MACHINE_ARN_ENV, type BaremetalScheduler } from '../../functions/config.js';

const READ = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'];
const WRITE = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'];

/** the DynamoDB actions each family and step uses (TransactWriteItems needs the per-item actions) */
export const FAMILY_ACTIONS: Record<string, string[]> = {
  root: [],
  nodes: [...READ, ...WRITE],
  'node-traits': [...READ, 'dynamodb:PutItem', 'dynamodb:DeleteItem'],
  'node-states': [...READ, ...WRITE],
  'node-vifs': [...READ, 'dynamodb:PutItem', 'dynamodb:DeleteItem'],
  allocations: [...READ, ...WRITE],
  drivers: [],
};
export const STEP_ACTIONS: Record<string, string[]> = {
  'find-candidates': ['dynamodb:Query'],
  'reserve-node': ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
  'fail-allocation': ['dynamodb:UpdateItem'],
  'advance-node': [...READ, ...WRITE],
  'fail-node-action': [...READ, ...WRITE],
};
/**
 * BAREMETAL_SCHEDULER=placement: bare-metal actions a step needs besides STEP_ACTIONS (the
 * node named like the allocation: a BatchGetItem shared by the lookups of one container,
 * store/baremetal/nodes.ts nodeUuidByNameShared) — the Placement items are BAREMETAL_PLACEMENT_ACCESS
 */
export const PLACEMENT_STEP_ACTIONS: Record<string, string[]> = { 'find-candidates': ['dynamodb:BatchGetItem'] };
/** the steps that keep the provider forest in memory with the placement scheduler (each entry awaits prewarm()) */
export const FOREST_STEPS = ['find-candidates', 'reserve-node'];
/** which state machine a family starts executions of */
const FAMILY_STARTS: Record<string, Machine> = { allocations: 'allocation', 'node-states': 'node-action' };
const ARN_ENV: Record<Machine, string> = STATE_MACHINE_ARN_ENV;

/**
 * An authorizer with the same configuration for another HTTP API. API Gateway
 * authorizers belong to one API (CDK refuses or, for JWT, silently mis-binds a
 * shared instance), so the bare-metal API gets its own copy of the stack's: same
 * issuer and audience, or the same Keystone authorizer Lambda.
 */
export function siblingAuthorizer(a: apigw.IHttpRouteAuthorizer, id: string): apigw.IHttpRouteAuthorizer {
  // the constructor arguments are kept (privately) on the instance; read them back
  if (a instanceof HttpJwtAuthorizer) {
    const c = a as unknown as { jwtIssuer: string; props: HttpJwtAuthorizerProps };
    return new HttpJwtAuthorizer(id, c.jwtIssuer, c.props);
  }
  if (a instanceof HttpLambdaAuthorizer) {
    const c = a as unknown as { handler: lambda.IFunction; props: HttpLambdaAuthorizerProps };
    return new HttpLambdaAuthorizer(id, c.handler, c.props);
  }
  throw new Error(`cannot attach a ${a.constructor.name} to the bare-metal API: build one for it`);
}

export interface BaremetalProps {
  table: dynamodb.TableV2;
  /**
   * the stack's authorizer; the bare-metal API gets its own sibling of it (see
   * siblingAuthorizer) on every route but the version documents. None: an open API
   * (the insecure test-only identity mode).
   */
  authorizer?: apigw.IHttpRouteAuthorizer;
  /** extra environment for the family Lambdas (the identity mode's: AUTH_STRATEGY, JWT_CLAIM_MAPPING) */
  environment?: Record<string, string>;
  /** stage settings shared with the other APIs (throttling, access logs) */
  configureStage?: (api: apigw.HttpApi, accessLogs: logs.LogGroup) => void;
  /**
   * where allocations find and reserve nodes (-c baremetalScheduler; default database).
   * 'placement' sets BAREMETAL_SCHEDULER on every bare-metal function and grants them the
   * Placement items they then write (BAREMETAL_PLACEMENT_ACCESS); 'database' grants none.
   */
  scheduler?: BaremetalScheduler;
  /** memory of the steps that hold the provider forest with the placement scheduler (MB) */
  forestMemoryMb?: number;
}

export class BaremetalApi extends Construct {
  readonly api: apigw.HttpApi;
  readonly families = new Map<string, BerthFunction>();
  readonly steps = new Map<string, BerthFunction>();
  readonly machines = new Map<Machine, sfn.StateMachine>();

  constructor(
    scope: Construct,
    id: string,
    private readonly props: BaremetalProps,
  ) {
    super(scope, id);
    const { table } = props;

    // ---- step Lambdas and the state machines built from the ASL files
    const placement = props.scheduler === 'placement';
    for (const step of STEPS) {
      const forest = placement && FOREST_STEPS.includes(step);
      const fn = new BerthFunction(this, `Step-${step}`, {
        entry: stepEntry(step),
        description: `Bare metal step ${step}`,
        table,
        access: 'none',
        memoryMb: forest ? (props.forestMemoryMb ?? 3008) : 1024,
        largeHeap: forest,
        environment: { ...this.schedulerEnv(), ...(forest ? { SNAPSHOT_PREWARM: 'true' } : {}) },
      });
      this.grantTable(fn.fn, [...STEP_ACTIONS[step]!, ...(placement ? (PLACEMENT_STEP_ACTIONS[step] ?? []) : [])]);
      if (placement) this.grantPlacement(fn.fn, BAREMETAL_PLACEMENT_ACCESS.steps[step]);
      this.steps.set(step, fn);
    }
    for (const [machine, spec] of Object.entries(MACHINES) as Array<[Machine, (typeof MACHINES)[Machine]]>) {
      const logGroup = new logs.LogGroup(this, `${machine}-logs`, { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
      const sm = new sfn.StateMachine(this, `${machine}-machine`, {
        definitionBody: sfn.DefinitionBody.fromString(readFileSync(join(ROOT, spec.file), 'utf8')),
        definitionSubstitutions: Object.fromEntries(
          Object.entries(spec.substitutions).map(([key, step]) => [key, this.steps.get(step)!.fn.functionArn]),
        ),
        tracingEnabled: true,
        logs: { destination: logGroup, level: sfn.LogLevel.ALL, includeExecutionData: false },
      });
      for (const step of new Set(Object.values(spec.substitutions))) {
        const fn = this.steps.get(step)!.fn;
        fn.grantInvoke(sm);
        this.acknowledgeInvokeWildcard(sm, fn);
      }
      this.machines.set(machine, sm);
    }

    // ---- the HTTP API: one Lambda per resource family
    this.api = new apigw.HttpApi(this, 'Api', {
      apiName: `${Stack.of(this).stackName}-baremetal`,
      description: 'Ironic-compatible bare-metal API (Berth)',
      createDefaultStage: true,
    });
    const accessLogs = new logs.LogGroup(this, 'AccessLogs', { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    props.configureStage?.(this.api, accessLogs);
    for (const family of BAREMETAL_FAMILIES) {
      const starts = FAMILY_STARTS[family];
      const fn = new BerthFunction(this, `Family-${family}`, {
        entry: `functions/baremetal/${family}.ts`,
        description: `Bare metal ${family}`,
        table,
        access: 'none',
        environment: {
          BAREMETAL_POLICY_MODE: 'secure-rbac',
          ...(starts ? { [ARN_ENV[starts]]: this.machines.get(starts)!.stateMachineArn } : {}),
          ...this.schedulerEnv(),
          ...props.environment,
        },
      });
      // its actions on bare-metal items, and the table's layout record (cdk/lib/permissions.ts)
      grantTableAccess(fn.fn, table, baremetalFamilyRules(family, FAMILY_ACTIONS[family] ?? [...READ, ...WRITE]));
      if (placement) this.grantPlacement(fn.fn, BAREMETAL_PLACEMENT_ACCESS.families[family]);
      if (starts) this.machines.get(starts)!.grantStartExecution(fn.fn);
      this.families.set(family, fn);
    }
    const authorizer = props.authorizer ? siblingAuthorizer(props.authorizer, `${id}Authorizer`) : undefined;
    const integrations = new Map<string, HttpLambdaIntegration>();
    const integration = (family: string) => {
      let i = integrations.get(family);
      if (!i) {
        i = new HttpLambdaIntegration(`Int-${family}`, this.families.get(family)!.fn);
        integrations.set(family, i);
      }
      return i;
    };
    for (const route of BAREMETAL_ROUTES) {
      const open = route.path === '/' || route.path === '/v1';
      // every method reaches the family, which answers 405 with Allow itself
      const added = this.api.addRoutes({
        path: route.path,
        methods: [apigw.HttpMethod.ANY],
        integration: integration(route.family),
        authorizer: open ? undefined : authorizer,
      });
      // without an authorizer (the insecure test-only mode) cdk-nag's APIG4 stays an error
      if (open) added.forEach(acknowledgePublicRoute);
    }
    const fallback = new apigw.HttpRoute(this, 'DefaultRoute', {
      httpApi: this.api,
      routeKey: apigw.HttpRouteKey.DEFAULT,
      integration: integration(BAREMETAL_DEFAULT_FAMILY),
    });
    acknowledgePublicRoute(fallback);
  }

  get url(): string {
    return this.api.apiEndpoint;
  }

  /**
   * Let the scheduled maintenance function resume orphaned allocations and stale node
   * actions (functions/maintenance/orphans.ts): read allocations and nodes, take them
   * over, and describe/start executions of both state machines.
   */
  grantOrphanRecovery(fn: lambda.Function): void {
    const placement = this.props.scheduler === 'placement';
    // with the placement scheduler it also migrates nodes (a node's version checked in each transaction)
    this.grantTable(fn, [
      'dynamodb:Query',
      'dynamodb:GetItem',
      'dynamodb:UpdateItem',
      'dynamodb:PutItem',
      ...(placement ? ['dynamodb:ConditionCheckItem'] : []),
    ]);
    if (placement) this.grantPlacement(fn, BAREMETAL_PLACEMENT_ACCESS.maintenance);
    for (const [k, v] of Object.entries(this.schedulerEnv())) fn.addEnvironment(k, v);
    for (const [machine, sm] of this.machines) {
      fn.addEnvironment(ARN_ENV[machine], sm.stateMachineArn);
      sm.grantStartExecution(fn);
      const executions = Arn.format(
        { service: 'states', resource: 'execution', resourceName: `${sm.stateMachineName}:*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME },
        Stack.of(this),
      );
      fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['states:DescribeExecution'], resources: [executions] }));
      const smId = Stack.of(this).getLogicalId(sm.node.defaultChild as sfn.CfnStateMachine);
      Validations.of(fn).acknowledge({
        id: `AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:<${smId}.Name>:*]`,
        reason: 'Recovery describes executions of this one state machine; execution names are generated per allocation.',
      });
    }
  }

  /** the functions' BAREMETAL_SCHEDULER (none: the default, database) */
  schedulerEnv(): Record<string, string> {
    return this.props.scheduler === 'placement' ? { BAREMETAL_SCHEDULER: 'placement' } : {};
  }

  /** the Placement items a function may touch with the placement scheduler (cdk/lib/permissions.ts) */
  private grantPlacement(fn: lambda.IFunction, rules: AccessRule[] | undefined): void {
    if (rules === undefined) throw new Error('a bare-metal function without BAREMETAL_PLACEMENT_ACCESS rules (cdk/lib/permissions.ts)');
    if (rules.length) grantTableAccess(fn, this.props.table, rules);
  }

  private grantTable(fn: lambda.IFunction, actions: string[]): void {
    // bound to bare-metal items and gsi2 (dynamodb:LeadingKeys; cdk/lib/permissions.ts)
    grantTableAccess(fn, this.props.table, baremetalRules(actions));
  }

  /** lambda:InvokeFunction on "<arn>:*" covers the function's versions only */
  private acknowledgeInvokeWildcard(sm: sfn.StateMachine, fn: lambda.Function): void {
    const id = Stack.of(this).getLogicalId(fn.node.defaultChild as lambda.CfnFunction);
    Validations.of(sm).acknowledge({
      id: `AwsSolutions::AwsSolutions-IAM5[Resource::<${id}.Arn>:*]`,
      reason: 'Step Functions invokes the step Lambda (and its versions); the wildcard covers only that function.',
    });
  }
}
