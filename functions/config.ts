/**
 * Runtime configuration, read from the environment once per process (a Lambda's
 * environment is set by cdk/, the local runtime's by local/start.ts).
 */
export interface Config {
  tableName: string;
  /** DynamoDB endpoint override (DynamoDB Local); undefined in AWS */
  ddbEndpoint?: string;
  region: string;
  /** 'noauth2' (local, tests) or 'authorizer' (identity from API Gateway) */
  authStrategy: 'noauth2' | 'authorizer';
  corsAllowedOrigins: string[];
  corsAllowHeaders?: string[];
  incompleteConsumerProjectId: string;
  incompleteConsumerUserId: string;
  /** global cap on allocation candidates per request (upstream max_allocation_candidates) */
  maxAllocationCandidates: number;
  randomizeAllocationCandidates: boolean;
  /** usage aggregates are sharded per project to spread concurrent claims */
  usageShards: number;
  /** change-log write shards */
  changeLogShards: number;
  /** how long the candidates snapshot may go without re-reading the change log (ms) */
  snapshotMaxStalenessMs: number;
  /** per-call DynamoDB timeout (ms) */
  ddbRequestTimeoutMs: number;
  /** full reload of the provider snapshot at least this often (s), a safety net under the change log */
  snapshotResyncS: number;
  /** largest request body accepted (bytes) */
  maxBodyBytes: number;
  /** longest query string accepted (characters) */
  maxQueryBytes: number;
}

function list(v: string | undefined): string[] {
  return (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function int(v: string | undefined, d: number): number {
  const n = v === undefined || v === '' ? NaN : Number.parseInt(v, 10);
  return Number.isFinite(n) ? n : d;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const allowHeaders = list(env.PLACEMENT_CORS_ALLOW_HEADERS);
  return {
    tableName: env.TABLE_NAME ?? 'berth',
    ddbEndpoint: env.DDB_ENDPOINT || undefined,
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'local',
    authStrategy: env.AUTH_STRATEGY === 'authorizer' ? 'authorizer' : 'noauth2',
    corsAllowedOrigins: list(env.PLACEMENT_CORS_ALLOWED_ORIGIN),
    corsAllowHeaders: allowHeaders.length ? allowHeaders : undefined,
    incompleteConsumerProjectId: env.INCOMPLETE_CONSUMER_PROJECT_ID ?? '00000000-0000-0000-0000-000000000000',
    incompleteConsumerUserId: env.INCOMPLETE_CONSUMER_USER_ID ?? '00000000-0000-0000-0000-000000000000',
    maxAllocationCandidates: int(env.MAX_ALLOCATION_CANDIDATES, -1),
    randomizeAllocationCandidates: env.RANDOMIZE_ALLOCATION_CANDIDATES === 'true',
    usageShards: Math.max(1, int(env.USAGE_SHARDS, 8)),
    changeLogShards: Math.max(1, int(env.CHANGE_LOG_SHARDS, 4)),
    snapshotMaxStalenessMs: Math.max(0, int(env.SNAPSHOT_MAX_STALENESS_MS, 0)),
    ddbRequestTimeoutMs: Math.max(100, int(env.DDB_REQUEST_TIMEOUT_MS, env.DDB_ENDPOINT ? 30_000 : 1_500)),
    snapshotResyncS: Math.max(0, int(env.SNAPSHOT_RESYNC_S, 900)),
    maxBodyBytes: Math.max(1024, int(env.MAX_BODY_BYTES, 4 * 1024 * 1024)),
    maxQueryBytes: Math.max(1024, int(env.MAX_QUERY_BYTES, 8 * 1024)),
  };
}

let cached: Config | undefined;
export function config(): Config {
  cached ??= loadConfig();
  return cached;
}
/** tests and the local runtime change the environment between servers */
export function resetConfig(): void {
  cached = undefined;
}
