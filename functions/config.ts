/**
 * Every setting Berth reads, from the environment, in one place (a Lambda's environment
 * is set by cdk/, the local runtime's by local/start.ts). Nothing else under functions/
 * reads process.env: modules take their settings from config(). Read once per process
 * and cached; tests and the local runtime that change the environment call resetConfig().
 */
type Env = Record<string, string | undefined>;

export type PlacementPolicyMode = 'default' | 'legacy-rbac' | 'secure-rbac' | 'open';
export type BaremetalPolicyMode = 'noauth' | 'legacy' | 'secure-rbac';
export type BaremetalScheduler = 'database' | 'placement';
/** the values BAREMETAL_SCHEDULER accepts (the first is the default) */
export const BAREMETAL_SCHEDULERS: readonly BaremetalScheduler[] = ['database', 'placement'];

export interface PolicySettings<M extends string> {
  /** undefined: the API's default for the identity strategy */
  mode?: M;
  /** YAML/JSON policy file whose rules override the defaults */
  file?: string;
  /** JSON object of rule overrides (applied after the file) */
  overrides?: string;
}

export interface KeystoneSettings {
  url?: string;
  username?: string;
  password?: string;
  /** Secrets Manager secret holding the service user's password (used when password is unset) */
  passwordSecretArn?: string;
  userDomain: string;
  project: string;
  projectDomain: string;
  /**
   * upper bound for the authorizer's own cache of a validation (s). In AWS the CDK sets
   * 0: API Gateway's authorizer cache is then the only window a revoked token keeps
   * working in (docs/security.md, "Authorizer windows").
   */
  cacheTtlS: number;
  timeoutMs: number;
}

export interface BaremetalSettings {
  policy: PolicySettings<BaremetalPolicyMode>;
  /** CONF.service_project_name (Ironic's service_role rule) */
  serviceProjectName: string;
  /** the conductor name reported for every node (there is no conductor to pick) */
  conductorName: string;
  /** CONF.default_resource_class */
  defaultResourceClass?: string;
  /** CONF.api.project_admin_can_manage_own_nodes */
  projectAdminCanManageOwnNodes: boolean;
  /** enabled hardware types */
  enabledDrivers: string[];
  /** fake-hardware: pause per driver call (ms), to make actions observable */
  fakeDelayMs: number;
  /** how often an empty allocatable index is looked at again (undefined: 0 locally, 1 in AWS) */
  indexRetries?: number;
  /** how long a new allocation may wait for its execution before orphan recovery takes over (s) */
  orphanGraceS: number;
  /** how many times orphan recovery resumes one allocation or node action before failing it */
  maxResumes: number;
  /**
   * BAREMETAL_HOLD_MS: how long a reservation's hold on a node keeps other allocations off
   * it (store/baremetal/allocations.ts holdNode): a hold outlives its reservation only when
   * the process holding it died, and then no longer than this.
   */
  holdMs: number;
  /**
   * BAREMETAL_SCHEDULER: where allocations find and reserve nodes. 'database' (default):
   * the node items and their index alone. 'placement': every node is also a resource
   * provider and every allocation a Placement consumer, written in the same transactions
   * (docs/baremetal.md, "Bare metal through Placement"). `npm start` and `cdk synth` refuse
   * any other value before anything starts; here it reads as the default.
   */
  scheduler: BaremetalScheduler;
  /**
   * BAREMETAL_MIGRATION_SETTLE_S: a migration pass to the placement scheduler completes
   * only if it began this long after the switch was first seen (work of processes still
   * running the old configuration has ended): 120 s in Lambda, 0 elsewhere.
   */
  migrationSettleS: number;
  allocationStateMachineArn?: string;
  nodeActionStateMachineArn?: string;
}

/** a token bucket: `rate` requests a second, `burst` at once (functions/core/ratelimit.ts) */
export interface RateLimit {
  rate: number;
  burst: number;
}

/** `RATE[:BURST]` (the burst defaults to the rate, rounded up); anything else: off */
export function parseRateLimit(v: string | undefined): RateLimit | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)(?::(\d+))?\s*$/.exec(v ?? '');
  if (!m) return undefined;
  const rate = Number(m[1]);
  const burst = m[2] === undefined ? Math.max(1, Math.ceil(rate)) : Number(m[2]);
  return rate > 0 && burst >= 1 ? { rate, burst } : undefined;
}

export interface ObservabilitySettings {
  serviceName: string;
  /** LOG_LEVEL: INFO unless set (local runs); cdk/ sets WARN in AWS */
  logLevel: string;
  /**
   * LOG_SAMPLE_RATE: the share of invocations (0–1) that log at DEBUG whatever the level
   * (Powertools Logger's sampling, JSON output only); 0 unless set, cdk/ sets it in AWS
   */
  logSampleRate: number;
  metricsNamespace: string;
  /** LOG_FORMAT: 'json' (Powertools, one object per line), 'text' (one readable line), 'auto' (text on a terminal) */
  logFormat: 'json' | 'text' | 'auto';
}

/** the change feed and the allocation history (docs/consistency.md, "The change feed") */
export interface FeedSettings {
  /** CHANGE_FEED: every transaction records its change (store/ddb/feed.ts); on unless "false" */
  enabled: boolean;
  /** FEED_SHARDS: partitions the feed items spread over (default 1: one partition, commit order) */
  shards: number;
  /** EVENT_BUS_NAME: the EventBridge bus the stream processor publishes to (unset: none) */
  eventBus?: string;
  /** HISTORY_RETENTION_DAYS: how long a closed allocation interval is kept (default 400) */
  historyRetentionDays: number;
}

export interface Config {
  tableName: string;
  /** DynamoDB endpoint override (DynamoDB Local); undefined in AWS */
  ddbEndpoint?: string;
  region: string;
  /**
   * How callers are identified (AUTH_STRATEGY): 'authorizer' (API Gateway's Keystone or
   * JWT authorizer verified them; the only strategy for AWS), 'noauth2' (request headers
   * are the identity: local runs and tests), or 'refused' when the setting is missing in
   * AWS, misspelt, or header identity in AWS without BERTH_INSECURE_NOAUTH=true: then
   * every request but the version documents is refused (authProblem says why).
   */
  authStrategy: 'noauth2' | 'authorizer' | 'refused';
  authProblem?: string;
  /** JSON claim mapping for JWT identities (functions/core/policy/identity.ts) */
  jwtClaimMapping?: string;
  placementPolicy: PolicySettings<PlacementPolicyMode>;
  corsAllowedOrigins: string[];
  corsAllowHeaders?: string[];
  incompleteConsumerProjectId: string;
  incompleteConsumerUserId: string;
  /** global cap on allocation candidates per request (upstream max_allocation_candidates) */
  maxAllocationCandidates: number;
  randomizeAllocationCandidates: boolean;
  /**
   * partitions a project's usage items spread over (USAGE#<project>#<shard>): a claim writes
   * one, GET /usages reads each. Default 1; 4 for projects making more than ~150 claims/s
   * (docs/cost.md sizes it). Set it when the table is created: items stay in their shard.
   */
  usageShards: number;
  /**
   * change-log partitions (`LOG#<shard>`): writes spread over them, every forest-served
   * request reads each. Default 1 (~1,500 writes/s); docs/cost.md sizes it for a write rate.
   * Raise it with every function updated at once (a reader that knows fewer shards misses
   * entries until it is updated too).
   */
  changeLogShards: number;
  /**
   * A write whose commit its writer learns more than this after its change-log entry's
   * timestamp is announced again (store/placement/changelog.ts LATE_MS). Every refresh
   * re-reads this much of the log (plus clockSkewMs), so it is what a refresh pays per
   * write in flight: 100 ms in Lambda (DynamoDB answers a transaction in tens of ms: the
   * slowest percent or so are announced again), 2 s elsewhere (DynamoDB Local on a busy
   * laptop or CI machine is slower, and a late write costs a second transaction).
   */
  changeLogLateMs: number;
  /** how far two processes' clocks may differ (ms): 20 in Lambda (Amazon Time Sync keeps hosts within a millisecond), 1,000 elsewhere */
  clockSkewMs: number;
  /** how long the writer of a change larger than one transaction may take before anyone may abort it (ms; store/ddb/intents/) */
  intentLeaseMs: number;
  /** how long the candidates snapshot may go without re-reading the change log (ms) */
  snapshotMaxStalenessMs: number;
  /** per-call DynamoDB timeout (ms) */
  ddbRequestTimeoutMs: number;
  /** full reload of the provider snapshot at least this often (s), a safety net under the change log */
  snapshotResyncS: number;
  /** load the provider snapshot when the Lambda starts (its init phase), not on the first request */
  snapshotPrewarm: boolean;
  /** start the snapshot from the stored forest image (SNAPSHOT_IMAGE=false: always read the index) */
  snapshotImage: boolean;
  /**
   * the image writer makes a new image at least this often when the forest changed (s): 45,
   * so every maintenance run (one a minute) writes one (mostly a small delta) and a new
   * container replays at most a minute or two of the change log (docs/cost.md)
   */
  imageIntervalS: number;
  /** the longest a global secondary index may lag the table (ms): after a load through gsi1 the change log is replayed this far back */
  snapshotIndexLagMs: number;
  /** largest request body accepted (bytes) */
  maxBodyBytes: number;
  /** longest query string accepted (characters) */
  maxQueryBytes: number;
  /** largest Lambda response payload (bytes, after compression and base64); 0 lifts the limit (local runs only) */
  maxResponseBytes: number;
  /** how long a process trusts "no legacy allocation rows" (ms; also how long an import waits) */
  legacyFlagTtlMs: number;
  /**
   * LAYOUT_SETTLE_S: after a deploy opens a table's layout migration, how long it waits
   * before converting anything (requests the previous release's functions had begun end
   * first): 120 s in Lambda, 0 elsewhere (docs/items.md, "Layout versions and upgrades")
   */
  layoutSettleS: number;
  /**
   * RATE_LIMIT=RATE[:BURST]: each caller's (project's) token bucket per API, in the table
   * (store/ratelimit.ts); beyond it both APIs answer 429 in their own format with
   * Retry-After. Off (undefined) unless set; `-c projectRateLimit` sets it in AWS,
   * `npm start -- --rate-limit` locally.
   */
  rateLimit?: RateLimit;
  /** RATE_LIMIT_EXEMPT_ROLES: callers with any of these roles are not counted */
  rateLimitExemptRoles: string[];
  /** claim guard: 'generation' only exists to repeat the measurement in docs/consistency.md */
  claimGuard: 'capacity' | 'generation';
  baremetal: BaremetalSettings;
  keystone: KeystoneSettings;
  observability: ObservabilitySettings;
  feed: FeedSettings;
}

/** the variables cdk/ sets to the bare-metal state machines' ARNs (read below) */
export const STATE_MACHINE_ARN_ENV = { allocation: 'ALLOCATION_STATE_MACHINE_ARN', 'node-action': 'NODE_ACTION_STATE_MACHINE_ARN' } as const;

function list(v: string | undefined): string[] {
  return (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function int(v: string | undefined, d: number): number {
  const n = v === undefined || v === '' ? Number.NaN : Number.parseInt(v, 10);
  return Number.isFinite(n) ? n : d;
}

function num(v: string | undefined, d: number): number {
  const n = v === undefined || v === '' ? Number.NaN : Number(v);
  return Number.isFinite(n) ? n : d;
}

function optional(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

/** AUTH_STRATEGY, failing closed: only an exact known value identifies anyone. */
function authStrategy(env: Env): Pick<Config, 'authStrategy' | 'authProblem'> {
  const v = env.AUTH_STRATEGY;
  // the Lambda runtime sets AWS_LAMBDA_FUNCTION_NAME; the local adapter and the tests do not
  const inLambda = !!env.AWS_LAMBDA_FUNCTION_NAME;
  if (v === 'authorizer') return { authStrategy: 'authorizer' };
  if (v === 'noauth2' || ((v === undefined || v === '') && !inLambda)) {
    if (inLambda && env.BERTH_INSECURE_NOAUTH !== 'true') {
      return {
        authStrategy: 'refused',
        authProblem: 'AUTH_STRATEGY=noauth2 takes identity from request headers; in AWS it also needs BERTH_INSECURE_NOAUTH=true (tests only)',
      };
    }
    return { authStrategy: 'noauth2' };
  }
  if (v === undefined || v === '') return { authStrategy: 'refused', authProblem: 'AUTH_STRATEGY is not set (expected "authorizer")' };
  return { authStrategy: 'refused', authProblem: `AUTH_STRATEGY=${JSON.stringify(v)} is not a known strategy ("authorizer", or "noauth2" locally)` };
}

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
    claimGuard: env.CLAIM_GUARD === 'generation' ? 'generation' : 'capacity',
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
