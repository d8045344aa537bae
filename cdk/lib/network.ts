/**
 * Berth's functions in a VPC (`-c vpc=create`, or `-c vpcId=… -c vpcSubnetIds=…`): for a
 * Keystone (or, later, a conductor network) that is reachable only privately. Every
 * BerthFunction is placed in the VPC's subnets (cdk/lib/function.ts reads the placement
 * set here), with the endpoints it needs instead of a NAT:
 *
 *   DynamoDB        gateway endpoint on the subnets' route tables (free)
 *   Step Functions  interface endpoint (the bare-metal families and maintenance start and
 *                   describe executions)
 *   Secrets Manager interface endpoint (Keystone mode: the authorizer reads the service
 *                   password)
 *
 * Lambda delivers the functions' logs (stdout) and X-Ray segments (its daemon listens on a
 * link-local address of the sandbox) itself, outside the function's network interface:
 * no CloudWatch Logs or X-Ray endpoint is needed. docs/cost.md has the monthly cost of the
 * endpoints against a NAT gateway.
 *
 * Security groups allow only what each function calls: the API and step functions reach
 * DynamoDB (its regional prefix list, looked up at deploy time, never at synth) and the
 * interface endpoints on 443; the authorizer reaches the Secrets Manager endpoint and
 * Keystone (its URL's port, to `-c keystoneCidr` or anywhere on that port); the endpoints
 * accept 443 from those two groups only. Nothing accepts connections from outside.
 *
 * An existing VPC is taken by its ids as attributes (no account lookup at synth: the
 * template stays environment-agnostic). Its DynamoDB gateway endpoint needs the subnets'
 * route tables (`-c vpcRouteTableIds`); a VPC that already reaches DynamoDB, Step
 * Functions and Secrets Manager (its own endpoints, or a NAT) says `-c vpcEndpoints=none`,
 * and the functions may then reach 443 anywhere (the NAT's destinations are not known here).
 */
import { Aws, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';

export interface NetworkOptions {
  /** 'create': a new VPC of two private isolated subnets (no NAT, no internet gateway) */
  create?: boolean;
  /** an existing VPC (vpc-…) */
  vpcId?: string;
  /** its subnets the functions and endpoints go in (at least two, in different AZs for availability) */
  subnetIds?: string[];
  /** the route tables of those subnets, for the DynamoDB gateway endpoint */
  routeTableIds?: string[];
  /** 'create' (default): the endpoints above; 'none': the VPC already reaches the AWS APIs */
  endpoints?: 'create' | 'none';
  /** where Keystone is (CIDR); the authorizer may reach its port there only. Default: anywhere on that port */
  keystoneCidr?: string;
}

/** What a function in the VPC is: one of the API/step/maintenance functions, or the Keystone authorizer. */
export type NetworkRole = 'aws' | 'keystone';

export class NetworkConfigError extends Error {}

const VPC_ID = /^vpc-[0-9a-f]{8}([0-9a-f]{9})?$/;
const SUBNET_ID = /^subnet-[0-9a-f]{8}([0-9a-f]{9})?$/;
const ROUTE_TABLE_ID = /^rtb-[0-9a-f]{8}([0-9a-f]{9})?$/;
const CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

function validCidr(v: string): boolean {
  const m = CIDR.exec(v);
  return !!m && m.slice(1, 5).every((o) => Number(o) <= 255) && Number(m[5]) <= 32;
}

/** The VPC settings, checked (undefined: no VPC); throws NetworkConfigError saying what is wrong. */
export function validateNetwork(o: NetworkOptions | undefined): NetworkOptions | undefined {
  if (!o) return undefined;
  const given = o.create || o.vpcId !== undefined || (o.subnetIds?.length ?? 0) > 0 || (o.routeTableIds?.length ?? 0) > 0;
  if (!given) {
    if (o.endpoints !== undefined || o.keystoneCidr !== undefined)
      throw new NetworkConfigError('vpcEndpoints and keystoneCidr apply to a VPC: add -c vpc=create or -c vpcId=… -c vpcSubnetIds=…');
    return undefined;
  }
  if (o.endpoints !== undefined && o.endpoints !== 'create' && o.endpoints !== 'none')
    throw new NetworkConfigError(`-c vpcEndpoints=${o.endpoints}: expected create or none`);
  if (o.keystoneCidr !== undefined && !validCidr(o.keystoneCidr))
    throw new NetworkConfigError(`keystoneCidr ${JSON.stringify(o.keystoneCidr)} is not an IPv4 CIDR (10.20.0.0/16)`);
  if (o.create) {
    if (o.vpcId !== undefined || o.subnetIds?.length || o.routeTableIds?.length)
      throw new NetworkConfigError(
        '-c vpc=create builds a new VPC: leave out vpcId, vpcSubnetIds and vpcRouteTableIds (or drop vpc=create to use yours)',
      );
    if (o.endpoints === 'none')
      throw new NetworkConfigError('-c vpc=create has no other way to the AWS APIs than its endpoints: leave out vpcEndpoints=none');
    return { ...o, endpoints: 'create' };
  }
  if (!o.vpcId || !VPC_ID.test(o.vpcId))
    throw new NetworkConfigError(`vpcId ${JSON.stringify(o.vpcId ?? '')} is not a VPC id (vpc-…); or use -c vpc=create`);
  const subnets = o.subnetIds ?? [];
  if (!subnets.length)
    throw new NetworkConfigError('vpcSubnetIds is required with vpcId: the private subnets the functions go in (subnet-a,subnet-b)');
  for (const s of subnets) if (!SUBNET_ID.test(s)) throw new NetworkConfigError(`vpcSubnetIds: ${JSON.stringify(s)} is not a subnet id (subnet-…)`);
  if (new Set(subnets).size !== subnets.length) throw new NetworkConfigError('vpcSubnetIds names a subnet twice');
  const endpoints = o.endpoints ?? 'create';
  const tables = o.routeTableIds ?? [];
  for (const t of tables)
    if (!ROUTE_TABLE_ID.test(t)) throw new NetworkConfigError(`vpcRouteTableIds: ${JSON.stringify(t)} is not a route table id (rtb-…)`);
  if (endpoints === 'create' && !tables.length) {
    throw new NetworkConfigError(
      'vpcRouteTableIds is required to create the DynamoDB gateway endpoint (the route tables of vpcSubnetIds); or -c vpcEndpoints=none if the VPC already reaches DynamoDB, Step Functions and Secrets Manager (endpoints or a NAT)',
    );
  }
  if (endpoints === 'none' && tables.length)
    throw new NetworkConfigError('vpcRouteTableIds is only used to create the DynamoDB endpoint: leave it out with vpcEndpoints=none');
  return { ...o, endpoints, subnetIds: subnets, routeTableIds: tables };
}

export interface BerthNetworkProps {
  options: NetworkOptions;
  /** Keystone mode: its URL (the authorizer's egress port) and whether a Secrets Manager endpoint is needed */
  keystoneUrl?: string;
}

/** The VPC, its endpoints and the functions' security groups; `placement(role)` is what a function is given. */
export class BerthNetwork extends Construct {
  readonly vpc: ec2.IVpc;
  readonly subnets: ec2.SubnetSelection;
  /** the API, step and maintenance functions */
  readonly functionsGroup: ec2.SecurityGroup;
  /** the Keystone authorizer (Keystone mode only) */
  readonly authorizerGroup?: ec2.SecurityGroup;
  /** the interface endpoints (endpoints=create) */
  readonly endpointsGroup?: ec2.SecurityGroup;
  readonly endpoints: ec2.IVpcEndpoint[] = [];

  constructor(scope: Construct, id: string, props: BerthNetworkProps) {
    super(scope, id);
    const o = props.options;
    if (o.create) {
      const flowLogs = new logs.LogGroup(this, 'FlowLogs', { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
      const vpc = new ec2.Vpc(this, 'Vpc', {
        maxAzs: 2,
        natGateways: 0,
        // private and isolated: the functions reach AWS through the endpoints below, Keystone
        // through whatever the operator routes to it (peering, Transit Gateway, VPN)
        subnetConfiguration: [{ name: 'functions', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 22 }],
        flowLogs: { all: { destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogs), trafficType: ec2.FlowLogTrafficType.REJECT } },
        restrictDefaultSecurityGroup: false,
      });
      this.vpc = vpc;
      this.subnets = { subnetType: ec2.SubnetType.PRIVATE_ISOLATED };
    } else {
      const subnetIds = o.subnetIds!;
      // attributes only: nothing is looked up in the account at synth time
      this.vpc = ec2.Vpc.fromVpcAttributes(this, 'Vpc', { vpcId: o.vpcId!, availabilityZones: subnetIds.map((_, i) => `az-${i}`) });
      const tables = o.routeTableIds ?? [];
      this.subnets = {
        subnets: subnetIds.map((subnetId, i) =>
          ec2.Subnet.fromSubnetAttributes(this, `Subnet${i}`, { subnetId, routeTableId: tables[Math.min(i, tables.length - 1)] }),
        ),
      };
    }

    // every function in the VPC gets Lambda's managed role for its network interfaces
    Validations.of(Stack.of(this)).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
      reason:
        'AWSLambdaVPCAccessExecutionRole only lets Lambda create, describe and delete the function’s network interfaces in the VPC (and write its logs).',
    });
    const group = (gid: string, description: string) =>
      new ec2.SecurityGroup(this, gid, { vpc: this.vpc, description, allowAllOutbound: false, disableInlineRules: true });
    this.functionsGroup = group('Functions', 'Berth functions: DynamoDB and the AWS API endpoints, on 443 only');
    if (props.keystoneUrl) this.authorizerGroup = group('Authorizer', 'Berth Keystone authorizer: Keystone and Secrets Manager only');

    if (o.endpoints === 'none') {
      // the VPC reaches the AWS APIs through its own endpoints or a NAT: destinations unknown here
      this.functionsGroup.addEgressRule(
        ec2.Peer.anyIpv4(),
        ec2.Port.tcp(443),
        'AWS APIs (DynamoDB, Step Functions) through the VPC’s own endpoints or NAT',
      );
      this.authorizerGroup?.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(443), 'Secrets Manager through the VPC’s own endpoint or NAT');
    } else {
      this.endpointsGroup = group('Endpoints', 'Berth interface endpoints: 443 from Berth functions only');
      const ddb = new ec2.GatewayVpcEndpoint(this, 'DynamoDb', {
        vpc: this.vpc,
        service: ec2.GatewayVpcEndpointAwsService.DYNAMODB,
        subnets: [this.subnets],
      });
      this.endpoints.push(ddb);
      this.interfaceEndpoint('StepFunctions', ec2.InterfaceVpcEndpointAwsService.STEP_FUNCTIONS, [this.functionsGroup]);
      if (this.authorizerGroup) this.interfaceEndpoint('SecretsManager', ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER, [this.authorizerGroup]);
      this.functionsGroup.addEgressRule(this.endpointsGroup, ec2.Port.tcp(443), 'the Step Functions endpoint');
      this.functionsGroup.addEgressRule(ec2.Peer.prefixList(this.dynamoDbPrefixList()), ec2.Port.tcp(443), 'DynamoDB (its gateway endpoint)');
      this.authorizerGroup?.addEgressRule(this.endpointsGroup, ec2.Port.tcp(443), 'the Secrets Manager endpoint');
    }
    if (this.authorizerGroup && props.keystoneUrl) {
      const u = new URL(props.keystoneUrl);
      const port = Number(u.port || 443);
      const peer = o.keystoneCidr ? ec2.Peer.ipv4(o.keystoneCidr) : ec2.Peer.anyIpv4();
      if (!(o.endpoints === 'none' && port === 443 && !o.keystoneCidr))
        this.authorizerGroup.addEgressRule(peer, ec2.Port.tcp(port), `Keystone (${u.host})`);
    }
  }

  /** what BerthFunction passes to Lambda for a function of this role */
  placement(role: NetworkRole): { vpc: ec2.IVpc; vpcSubnets: ec2.SubnetSelection; securityGroups: ec2.ISecurityGroup[] } {
    const g = role === 'keystone' ? this.authorizerGroup : this.functionsGroup;
    if (!g) throw new Error('a Keystone authorizer in the VPC needs the network built with the Keystone URL');
    return { vpc: this.vpc, vpcSubnets: this.subnets, securityGroups: [g] };
  }

  private interfaceEndpoint(eid: string, service: ec2.InterfaceVpcEndpointAwsService, clients: ec2.SecurityGroup[]): void {
    const ep = new ec2.InterfaceVpcEndpoint(this, eid, {
      vpc: this.vpc,
      service,
      subnets: this.subnets,
      securityGroups: [this.endpointsGroup!],
      privateDnsEnabled: true,
      open: false,
    });
    for (const c of clients) this.endpointsGroup!.addIngressRule(c, ec2.Port.tcp(443), `${eid} from ${c.node.id}`);
    this.endpoints.push(ep);
  }

  /**
   * The region's DynamoDB prefix list (com.amazonaws.<region>.dynamodb), read when the
   * stack deploys (DescribeManagedPrefixLists has no resource-level permission): the
   * functions' egress names exactly the addresses the gateway endpoint routes.
   */
  private dynamoDbPrefixList(): string {
    const lookup = new cr.AwsCustomResource(this, 'DynamoDbPrefixList', {
      onUpdate: {
        service: 'EC2',
        action: 'describeManagedPrefixLists',
        parameters: { Filters: [{ Name: 'prefix-list-name', Values: [`com.amazonaws.${Aws.REGION}.dynamodb`] }] },
        physicalResourceId: cr.PhysicalResourceId.of(`dynamodb-prefix-list-${Aws.REGION}`),
        outputPaths: ['PrefixLists.0.PrefixListId'],
      },
      policy: cr.AwsCustomResourcePolicy.fromStatements([new iam.PolicyStatement({ actions: ['ec2:DescribeManagedPrefixLists'], resources: ['*'] })]),
      installLatestAwsSdk: false,
    });
    Validations.of(lookup).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
      reason: 'ec2:DescribeManagedPrefixLists has no resource-level permission; the deploy-time lookup reads the region’s DynamoDB prefix list only.',
    });
    return lookup.getResponseField('PrefixLists.0.PrefixListId');
  }
}

const networkOfStack = new WeakMap<Stack, BerthNetwork>();

/** Place every BerthFunction of `stack` built after this call in the network's VPC. */
export function setFunctionNetwork(stack: Stack, network: BerthNetwork): void {
  networkOfStack.set(stack, network);
}

export function functionNetwork(scope: Construct): BerthNetwork | undefined {
  return networkOfStack.get(Stack.of(scope));
}
