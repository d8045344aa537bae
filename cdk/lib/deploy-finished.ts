/**
 * The deploy's last step (docs/items.md, "Layout versions and upgrades"): once every
 * function of the stack is the new release, the maintenance function is told so
 * (`{"berth":"deployed"}`, functions/maintenance/handler.ts): it records an unrecorded
 * table's layout and opens the migration of a table still at the previous release's
 * layout — nothing of that release serves it any more (its requests in flight end within
 * LAYOUT_SETTLE_S, which the migration waits). CloudFormation updates the functions one
 * by one (and an alias CodeDeploy shifts, only at the end of its shift); this resource
 * depends on all of them, so it runs after the last, and again at
 * every deploy that changes any function's code (its release id is a hash of them all).
 */
import { createHash } from 'node:crypto';
import { Lazy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';

export interface DeployFinishedProps {
  /** the maintenance function, told when the deploy has finished */
  maintenance: lambda.IFunction;
}

export class DeployFinished extends Construct {
  readonly resource: cr.AwsCustomResource;

  constructor(scope: Construct, id: string, props: DeployFinishedProps) {
    super(scope, id);
    const stack = Stack.of(this);
    // every function's code, as synthesised: a new release changes it
    const release = Lazy.string({
      produce: () => {
        const codes = stack.node
          .findAll()
          .filter((c): c is lambda.CfnFunction => c instanceof lambda.CfnFunction)
          .filter((f) => !f.node.path.includes(this.node.path))
          .map((f) => JSON.stringify(stack.resolve(f.code)))
          .sort();
        return createHash('sha256').update(codes.join('\n')).digest('hex').slice(0, 16);
      },
    });
    const call: cr.AwsSdkCall = {
      service: 'Lambda',
      action: 'invoke',
      parameters: {
        FunctionName: props.maintenance.functionName,
        // asynchronous: the deploy does not wait for the migration, which runs on
        InvocationType: 'Event',
        Payload: Lazy.string({ produce: () => JSON.stringify({ berth: 'deployed', release: stack.resolve(release) }) }),
      },
      physicalResourceId: cr.PhysicalResourceId.of(Lazy.string({ produce: () => `berth-deployed-${stack.resolve(release)}` })),
    };
    this.resource = new cr.AwsCustomResource(this, 'Tell', {
      onCreate: call,
      onUpdate: call,
      installLatestAwsSdk: false,
      policy: cr.AwsCustomResourcePolicy.fromStatements([
        new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [props.maintenance.functionArn] }),
      ]),
    });
    // after every function of the stack (and so after everything they depend on), and after
    // every alias: a gradual deploy (-c forestDeploy=linear) updates an alias only once
    // CodeDeploy has shifted all of its traffic, so the old release serves nothing then
    for (const c of stack.node.findAll()) {
      if ((c instanceof lambda.Function || c instanceof lambda.Alias) && !c.node.path.includes(this.node.path)) this.resource.node.addDependency(c);
    }
    Validations.of(this).acknowledge({
      id: 'AwsSolutions::AwsSolutions-L1',
      reason: "The custom resource's provider function is CDK's own (AwsCustomResource), on the runtime CDK chooses for it.",
    });
  }
}
