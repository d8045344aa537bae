/** What a resource-family module exports: its routes and its Lambda entry point. */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';

export interface LambdaFamily {
  routes: Record<string, unknown>;
  handler: (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
}
