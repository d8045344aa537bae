/** What a resource-family module exports: its routes and its Lambda entry point. */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';

export type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

export interface LambdaFamily {
  routes: Record<string, unknown>;
  handler: LambdaHandler;
}

/** family name -> its Lambda handler (what the local adapter and the tests serve) */
export function handlersOf(families: Record<string, LambdaFamily>): Record<string, LambdaHandler> {
  return Object.fromEntries(Object.entries(families).map(([name, m]) => [name, m.handler]));
}
