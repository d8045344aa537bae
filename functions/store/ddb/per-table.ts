/**
 * Module state that belongs to one table. A process talks to one table in AWS, but the
 * local runtime and the tests restart DynamoDB Local or switch tables under a running
 * process: state kept for the old table (a provider snapshot, cached sequences) must not
 * answer for the new one.
 */
import { config } from '../../config.js';

/** the table this process talks to now: endpoint, region and name (a restarted local stack is another table) */
export function tableKey(): string {
  const c = config();
  return `${c.ddbEndpoint ?? ''}|${c.region}|${c.tableName}`;
}

/** One value per table: made on first use, and made again once the process talks to another table. */
export function perTable<T>(make: () => T): () => T {
  let value: T | undefined;
  let madeFor = '';
  return () => {
    const key = tableKey();
    if (value === undefined || key !== madeFor) {
      value = make();
      madeFor = key;
    }
    return value;
  };
}
