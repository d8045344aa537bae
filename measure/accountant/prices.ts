/**
 * Public prices the accountant's monthly costs use: us-east-1 (N. Virginia), on-demand,
 * no free tier, no savings plans. Dated: looked up 2026-11-25 with the project's search
 * tool (stored copies of public pages); docs/cost.md repeats this table with the same
 * sources. A price that changes is changed here (and there) with its new date.
 */
export const PRICES = {
  asOf: '2026-11-25',
  region: 'us-east-1',
  dynamodb: {
    /** $ per million read request units (a strongly consistent read of up to 4 KB = 1 RRU) */
    perMillionReadUnits: 0.125,
    /** $ per million write request units (a standard write of up to 1 KB = 1 WRU; index writes alike) */
    perMillionWriteUnits: 0.625,
    source:
      'https://aws.amazon.com/dynamodb/pricing/on-demand/ — on-demand throughput halved from 2024-11-01 ($1.25 -> $0.625 per million WRU, $0.25 -> $0.125 per million RRU); as quoted by airbyte.com/data-engineering-resources/dynamodb-pricing (2025-07-21) and jusdb.com (2025-08-19)',
  },
  dynamodbProvisioned: {
    /** $ per write capacity unit-hour and read capacity unit-hour (standard table class; the 2024-11 cut was on-demand's only) */
    perWcuHour: 0.00065,
    perRcuHour: 0.00013,
    source:
      'https://aws.amazon.com/dynamodb/pricing/provisioned/ — us-east-1 $0.00065 per WCU-hour, $0.00013 per RCU-hour; as quoted by several public cost guides (2024-2026) found with the search tool',
  },
  lambda: {
    /** Arm (Graviton), the architecture the stack deploys (cdk/lib/function.ts), first 7.5 billion GB-s a month */
    perGbSecondArm: 0.0000133334,
    perMillionRequests: 0.2,
    source:
      'https://aws.amazon.com/lambda/pricing/ — Arm $0.0000133334 per GB-s (first 7.5 billion GB-s/month), $0.20 per million requests; as quoted by cloudchipr.com/blog/aws-lambda-pricing and lambda_local_runner docs (2025)',
  },
  apiGateway: {
    /** HTTP APIs: $1.00 per million requests for the first 300 million a month, $0.90 after (each 512 KB of a request counts as one) */
    perMillionHttpRequests: 1.0,
    perMillionHttpRequestsAfter300M: 0.9,
    source: 'https://aws.amazon.com/api-gateway/pricing/ — HTTP APIs; as quoted by awsforengineers.com (2025-05-19) and go-cloud.io (2026)',
  },
  cloudwatchLogs: {
    /** $ per GB ingested (standard class; Lambda logs' first tier) */
    perGbIngested: 0.5,
    source: 'https://aws.amazon.com/cloudwatch/pricing/ — Logs, standard ingestion $0.50 per GB; as quoted by go-cloud.io (2026)',
  },
} as const;

/** seconds in the month the costs are for (30.44 days: a year / 12) */
export const SECONDS_PER_MONTH = (365.25 * 24 * 3600) / 12;

/** DynamoDB read units consumed per second around the clock, on demand: $ a month */
export const onDemandReadMonthly = (perS: number): number => (perS * SECONDS_PER_MONTH * PRICES.dynamodb.perMillionReadUnits) / 1e6;
/** DynamoDB write units consumed per second around the clock, on demand: $ a month */
export const onDemandWriteMonthly = (perS: number): number => (perS * SECONDS_PER_MONTH * PRICES.dynamodb.perMillionWriteUnits) / 1e6;
