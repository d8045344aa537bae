/**
 * Every setting Berth reads, from the environment, in one place (a Lambda's environment
 * is set by cdk/, the local runtime's by local/start.ts). Nothing else under functions/
 * reads process.env: modules take their settings from config(). Read once per process
 * and cached; tests and the local runtime that change the environment call resetConfig().
 * What each setting means is functions/config/settings.ts; how a variable is read,
 * functions/config/parse.ts. This module is the one entry: import settings from here.
 */
import { authStrategy, int, list, num, optional, parseRateLimit, type Env } from './config/parse.js';
import { STATE_MACHINE_ARN_ENV, type Config, type PlacementPolicyMode } from './config/settings.js';

export type {
  BaremetalPolicyMode,
  BaremetalScheduler,
  BaremetalSettings,
  Config,
  FeedSettings,
  KeystoneSettings,
  ObservabilitySettings,
  PlacementPolicyMode,
  PolicySettings,
  RateLimit,
} from './config/settings.js';
export { BAREMETAL_SCHEDULERS, STATE_MACHINE_ARN_ENV } from './config/settings.js';
export { parseRateLimit } from './config/parse.js';

export function loadConfig(env: Env = process.env): Config {
  const allowHeaders = list(env.PLACEMENT_CORS_ALLOW_HEADERS);
  const bmMode = env.BAREMETAL_POLICY_MODE;
  const indexRetries = num(env.BAREMETAL_INDEX_RETRIES, -1);
  const orphanGrace = num(env.BAREMETAL_ORPHAN_GRACE_S, 30);
  // the Lambda runtime sets AWS_LAMBDA_FUNCTION_NAME; the local adapter and the tests do not
  const inLambda = !!env.AWS_LAMBDA_FUNCTION_NAME;
  return {
    tableName: env.TABLE_NAME ?? 'berth',
    ddbEndpoint: optional(env.DDB_ENDPOINT),
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'local',
    ...authStrategy(env),
    jwtClaimMapping: optional(env.JWT_CLAIM_MAPPING),
    placementPolicy: {
      mode: optional(env.PLACEMENT_POLICY_MODE) as PlacementPolicyMode | undefined,
      file: optional(env.PLACEMENT_POLICY_FILE),
      overrides: optional(env.PLACEMENT_POLICY_OVERRIDES),
    },
    corsAllowedOrigins: list(env.PLACEMENT_CORS_ALLOWED_ORIGIN),
    corsAllowHeaders: allowHeaders.length ? allowHeaders : undefined,
    incompleteConsumerProjectId: env.INCOMPLETE_CONSUMER_PROJECT_ID ?? '00000000-0000-0000-0000-000000000000',
    incompleteConsumerUserId: env.INCOMPLETE_CONSUMER_USER_ID ?? '00000000-0000-0000-0000-000000000000',
    maxAllocationCandidates: int(env.MAX_ALLOCATION_CANDIDATES, -1),
    randomizeAllocationCandidates: env.RANDOMIZE_ALLOCATION_CANDIDATES === 'true',
    usageShards: Math.max(1, int(env.USAGE_SHARDS, 1)),
    changeLogShards: Math.max(1, int(env.CHANGE_LOG_SHARDS, 1)),
    changeLogLateMs: Math.max(1, int(env.CHANGE_LOG_LATE_MS, inLambda ? 100 : 2_000)),
    clockSkewMs: Math.max(0, int(env.CLOCK_SKEW_MS, inLambda ? 20 : 1_000)),
    intentLeaseMs: Math.max(100, int(env.INTENT_LEASE_MS, 60_000)),
    snapshotMaxStalenessMs: Math.max(0, int(env.SNAPSHOT_MAX_STALENESS_MS, 0)),
    ddbRequestTimeoutMs: Math.max(100, int(env.DDB_REQUEST_TIMEOUT_MS, env.DDB_ENDPOINT ? 30_000 : 1_500)),
    snapshotResyncS: Math.max(0, int(env.SNAPSHOT_RESYNC_S, 900)),
    snapshotPrewarm: env.SNAPSHOT_PREWARM === 'true',
    snapshotImage: env.SNAPSHOT_IMAGE !== 'false',
    imageIntervalS: Math.max(0, int(env.FOREST_IMAGE_INTERVAL_S, 45)),
    snapshotIndexLagMs: Math.max(0, int(env.SNAPSHOT_INDEX_LAG_MS, 60_000)),
    maxBodyBytes: Math.max(1024, int(env.MAX_BODY_BYTES, 4 * 1024 * 1024)),
    maxQueryBytes: Math.max(1024, int(env.MAX_QUERY_BYTES, 8 * 1024)),
    maxResponseBytes: Math.max(0, int(env.MAX_RESPONSE_BYTES, 6 * 1024 * 1024)),
    legacyFlagTtlMs: Math.max(0, int(env.LEGACY_FLAG_TTL_MS, 60_000)),
    layoutSettleS: Math.max(0, num(env.LAYOUT_SETTLE_S, inLambda ? 120 : 0)),
    rateLimit: parseRateLimit(env.RATE_LIMIT),
    rateLimitExemptRoles: list(env.RATE_LIMIT_EXEMPT_ROLES),
    baremetal: {
      policy: {
        mode: bmMode === 'legacy' || bmMode === 'secure-rbac' || bmMode === 'noauth' ? bmMode : undefined,
        file: optional(env.BAREMETAL_POLICY_FILE),
        overrides: optional(env.BAREMETAL_POLICY_OVERRIDES),
      },
      serviceProjectName: optional(env.BAREMETAL_SERVICE_PROJECT_NAME) ?? 'service',
      conductorName: optional(env.BAREMETAL_CONDUCTOR_NAME) ?? 'berth',
      defaultResourceClass: optional(env.BAREMETAL_DEFAULT_RESOURCE_CLASS),
      projectAdminCanManageOwnNodes: env.BAREMETAL_PROJECT_ADMIN_CAN_MANAGE_OWN_NODES !== 'false',
      enabledDrivers: list(env.BAREMETAL_ENABLED_DRIVERS ?? 'fake-hardware'),
      fakeDelayMs: Math.max(0, num(env.BAREMETAL_FAKE_DELAY_MS, 0)),
      indexRetries: indexRetries >= 0 ? indexRetries : undefined,
      orphanGraceS: orphanGrace >= 0 ? orphanGrace : 30,
      maxResumes: Math.max(0, int(env.BAREMETAL_MAX_RESUMES, 3)),
      holdMs: Math.max(100, int(env.BAREMETAL_HOLD_MS, 10_000)),
      scheduler: env.BAREMETAL_SCHEDULER === 'placement' ? 'placement' : 'database',
      migrationSettleS: Math.max(0, num(env.BAREMETAL_MIGRATION_SETTLE_S, inLambda ? 120 : 0)),
      allocationStateMachineArn: optional(env[STATE_MACHINE_ARN_ENV.allocation]),
      nodeActionStateMachineArn: optional(env[STATE_MACHINE_ARN_ENV['node-action']]),
    },
    keystone: {
      url: optional(env.KEYSTONE_URL),
      username: optional(env.KEYSTONE_USERNAME),
      password: optional(env.KEYSTONE_PASSWORD),
      passwordSecretArn: optional(env.KEYSTONE_PASSWORD_SECRET_ARN),
      userDomain: env.KEYSTONE_USER_DOMAIN ?? 'Default',
      project: env.KEYSTONE_PROJECT ?? 'service',
      projectDomain: env.KEYSTONE_PROJECT_DOMAIN ?? 'Default',
      cacheTtlS: Math.max(0, num(env.KEYSTONE_CACHE_TTL_S, 30)),
      timeoutMs: num(env.KEYSTONE_TIMEOUT_MS, 5000),
    },
    feed: {
      enabled: env.CHANGE_FEED !== 'false',
      shards: Math.max(1, int(env.FEED_SHARDS, 1)),
      eventBus: optional(env.EVENT_BUS_NAME),
      historyRetentionDays: Math.max(1, num(env.HISTORY_RETENTION_DAYS, 400)),
    },
    observability: {
      serviceName: env.POWERTOOLS_SERVICE_NAME ?? env.SERVICE_NAME ?? 'berth',
      logLevel: (env.LOG_LEVEL ?? 'INFO').toUpperCase(),
      logSampleRate: Math.min(1, Math.max(0, num(env.LOG_SAMPLE_RATE, 0))),
      metricsNamespace: env.POWERTOOLS_METRICS_NAMESPACE ?? 'Berth',
      logFormat: env.LOG_FORMAT === 'json' || env.LOG_FORMAT === 'text' ? env.LOG_FORMAT : 'auto',
    },
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
