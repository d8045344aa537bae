/** One DynamoDB Local for the whole integration run; each test file gets its own table. */
import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal, type DdbLocal } from '../../local/ddb-local.js';

let ddb: DdbLocal | undefined;

export default async function setup(project: TestProject) {
  if (process.env.BERTH_TEST_DDB_ENDPOINT) {
    project.provide('ddbEndpoint', process.env.BERTH_TEST_DDB_ENDPOINT);
    return;
  }
  ddb = await startDynamoDbLocal({ heapMb: 2048 });
  project.provide('ddbEndpoint', ddb.endpoint);
  return async () => {
    await ddb?.stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    ddbEndpoint: string;
  }
}
