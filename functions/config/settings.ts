/**
 * What the settings are (functions/config.ts reads them from the environment): the shape
 * of Config and of its parts, with what each setting means and its default.
 */
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
  baremetal: BaremetalSettings;
  keystone: KeystoneSettings;
  observability: ObservabilitySettings;
  feed: FeedSettings;
}

/** the variables cdk/ sets to the bare-metal state machines' ARNs (read below) */
export const STATE_MACHINE_ARN_ENV = { allocation: 'ALLOCATION_STATE_MACHINE_ARN', 'node-action': 'NODE_ACTION_STATE_MACHINE_ARN' } as const;
