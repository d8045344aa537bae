/**
 * The projections: a calibrated profile (./model.ts) at each cloud size of docs/cost.md
 * (./scenarios.ts), per request type and per family, the partitions' headroom, the costs
 * between requests, the change feed, and the monthly bill on demand and provisioned.
 */
import { table } from '../report.js';
import { r1, r2 } from '../../bench/kit.js';
import { projectBetween, type BetweenSettings } from './between.js';
import { ceiling, project, sum, type Assumptions, type Profile, type Projection } from './model.js';
import type { LogDesign } from './log-poll.js';
import { onDemandReadMonthly, PRICES } from './prices.js';
import { projectFeed } from './feed.js';
import { AUTOSCALING_TARGET, provisionedMonthly } from './billing.js';
import { GSIS } from '../../functions/store/ddb/table.js';
import type { Reporter } from './options.js';
import { COLD_BURST, logFloor, SCENARIOS, SCHEDULER_LABELS, scenarioRates, withSettings, type BetweenProfile } from './scenarios.js';

const money = (x: number) => `$${x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(2)}`;

/** the maintenance function's schedule in AWS (cdk/lib/maintenance.ts: every minute) */
const MAINTENANCE_PERIOD_S = 60;
/** the image chunks' key family */
const IMAGE_FAMILY = 'IMG#*#*';
/** the deploy procedure's image cadence (docs/cost.md: `npx berth image --every 2` through a deploy), and its image's age at worst (a delta written within a second) */
const DEPLOY_WINDOW_EVERY_S = 2;
const DEPLOY_WINDOW_AGE_S = DEPLOY_WINDOW_EVERY_S + 1;
/** a gradual deploy's steps (-c forestDeploy=linear: CodeDeploy's 10 % every minute) */
const LINEAR_DEPLOY_STEPS = 10;

export async function reportProjections(
  rep: Reporter,
  profile: Profile,
  a0: Assumptions,
  d0: LogDesign,
  between?: BetweenProfile,
): Promise<Projection[]> {
  const out: Projection[] = [];
  const { loadConfig } = await import('../../functions/config.js');
  const lambdaConfig = loadConfig({ ...process.env, AWS_LAMBDA_FUNCTION_NAME: 'accountant', FOREST_IMAGE_INTERVAL_S: '', SNAPSHOT_RESYNC_S: '' });
  const { IMAGE_CHUNK_BYTES } = await import('../../functions/store/placement/image.js');
  // an eventually consistent read of one chunk item (base64 text: 4/3 of the compressed bytes)
  const chunkReadUnits = Math.ceil(((IMAGE_CHUNK_BYTES * 4) / 3 + 100) / 4096) / 2;
  for (const s of SCENARIOS) {
    const rates = scenarioRates(s);
    const { a: a1, d, note } = await withSettings(s, profile, a0, d0);
    const a = { ...a1, chunkReadUnits };
    const p = project(profile, rates, s.hosts, a, d);
    out.push(p);
    const cap = ceiling(profile, rates, (l) => SCHEDULER_LABELS.has(l), s.hosts, a, d);
    const forest = p.perLabel.filter((x) => x.poll);
    const fr = forest.reduce((n, x) => n + x.rate, 0);
    const forestUnits = fr ? forest.reduce((n, x) => n + x.readPerRequest * x.rate, 0) / fr : 0;
    rep.say(`\n${s.name}${note ? `, deployed with ${note}` : ''}`);
    rep.say(
      `  requests ${r1(Object.values(rates).reduce((n, x) => n + x, 0))}/s; DynamoDB ${Math.round(p.readPerS).toLocaleString('en-US')} read + ${Math.round(p.writePerS).toLocaleString('en-US')} write units/s; warm containers ${p.lambdas
        .filter((x) => x.pollsPerS > 0)
        .map((x) => `${x.lambda.replace('placement-', '')} ${x.warm} (poll gap ${r2(x.gapS)} s)`)
        .join(', ')}`,
    );
    rep.say(
      `  forest-served read units per request: ${r2(forestUnits)}; claim (claim:put) ${r2(p.perLabel.find((x) => x.label === 'claim:put')?.writePerRequest ?? 0)} write units incl. index`,
    );
    rep.say(
      `\n${table(
        ['key family', 'spread', 'read/s', 'write/s', 'keys r/w', 'hottest read/s', 'hottest write/s', 'of limit'],
        p.families
          .slice(0, 8)
          .map((f) => [
            f.family,
            f.spread,
            Math.round(f.readPerS),
            Math.round(f.writePerS),
            `${r1(f.keysRead)}/${r1(f.keysWrite)}`,
            r1(f.hotReadPerS),
            r1(f.hotWritePerS),
            `${Math.round(f.utilisation * 100)} %`,
          ]),
      )}`,
    );
    const ceilingText = !Number.isFinite(cap.multiple)
      ? 'no key reaches its limit below 1000x these rates'
      : cap.multiple < 1e-6
        ? `${cap.family} is over its limit from the hosts' refresh alone, before any claim`
        : `the scheduler's rates x ${r2(cap.multiple)} = ${Math.round(s.claimsPerS * cap.multiple)} claims/s (${cap.family} at its limit)`;
    rep.say(`  first key to saturate: ${p.hottest.family} at ${Math.round(p.hottest.utilisation * 100)} % of its limit; ceiling: ${ceilingText}`);
    rep.say(
      `  monthly (${PRICES.region}, prices of ${PRICES.asOf}): DynamoDB ${money(p.cost.dynamodbRead + p.cost.dynamodbWrite)} (reads ${money(p.cost.dynamodbRead)}, writes ${money(p.cost.dynamodbWrite)}), Lambda ${money(p.cost.lambda)}, API Gateway ${money(p.cost.apiGateway)}, logs ${money(p.cost.logs)}: total ${money(p.cost.total)}`,
    );
    // the change feed: what runs after the commit (the feed items are in the write units above)
    const changesPerS = (rates['claim:put'] ?? 0) + (rates['delete:put'] ?? 0);
    const feed = projectFeed(changesPerS);
    rep.say(
      `  change feed: ${r1(changesPerS)} changes/s -> ${r1(feed.eventsPerS)} events/s (EventBridge ${money(feed.monthly.eventbridge)}), processor ${r2(feed.invocationsPerS)} invocations/s, ${r2(feed.gbSecondsPerS)} GB-s/s (Lambda ${money(feed.monthly.lambda)}), history ${r1(feed.historyWriteUnitsPerS)} write units/s (${money(feed.monthly.historyWrites)}); feed items ${r1(feed.feedItemWriteUnitsPerS)} write units/s over FEED_SHARDS=${feed.shards} (${Math.round(feed.partitionUtilisation * 100)} % of a partition): ${money(feed.monthly.total)}/month, total with the feed ${money(p.cost.total + feed.monthly.total)}`,
    );
    if (between) {
      const warm = p.lambdas.filter((x) => x.pollsPerS > 0).reduce((n, x) => n + x.warm, 0);
      const logBytesPerS = Object.entries(rates).reduce((n, [l, r]) => n + r * (profile.labels[l]?.logBytesWritten ?? 0), 0);
      const ageMax = lambdaConfig.imageIntervalS + MAINTENANCE_PERIOD_S;
      const settings: BetweenSettings = {
        providers: s.hosts,
        warm,
        burst: Math.max(warm, COLD_BURST),
        burstS: 1,
        logBytesPerS,
        shards: d.shards,
        overlapS: d.overlapS,
        imageAgeMaxS: ageMax,
        imageAgeMeanS: ageMax / 2,
        chunkItemBytes: (IMAGE_CHUNK_BYTES * 4) / 3,
        lifetimeS: a.containerLifetimeS,
        resyncS: lambdaConfig.snapshotResyncS,
        resyncIndexShare: between.resyncIndexShare,
        writerIndexS: lambdaConfig.snapshotResyncS,
        writerRunS: Math.max(MAINTENANCE_PERIOD_S, lambdaConfig.imageIntervalS),
        changesPerS: Object.entries(rates).reduce((n, [l, r]) => n + r * (profile.labels[l]?.providerChanges ?? 0), 0),
      };
      const b = projectBetween(between.load, settings);
      // the deploy procedure (docs/cost.md): `npx berth image --every 2` through the deploy, an image at most ~3 s old
      const windowed = projectBetween(between.load, { ...settings, imageAgeMaxS: DEPLOY_WINDOW_AGE_S, imageAgeMeanS: DEPLOY_WINDOW_AGE_S / 2 });
      // and a gradual deploy beside it (-c forestDeploy=linear: ten steps a minute apart)
      const linear = projectBetween(between.load, {
        ...settings,
        imageAgeMaxS: DEPLOY_WINDOW_AGE_S,
        imageAgeMeanS: DEPLOY_WINDOW_AGE_S / 2,
        steps: LINEAR_DEPLOY_STEPS,
      });
      const steady = (f: string) => p.families.find((x) => x.family === f)?.hotReadPerS ?? 0;
      const pct = (x: number) => `${Math.round(x * 100)} %`;
      const logSteady = steady(profile.changeLogFamily) / 3000;
      const chunkSteady = steady(IMAGE_FAMILY) / 3000;
      // the model's own load term (every forest container loads at start and each resync) is replaced by the measured one
      const modelLoads =
        p.lambdas.filter((x) => x.pollsPerS > 0).reduce((n, x) => n + x.warm / a.containerLifetimeS + x.warm / a.resyncS, 0) *
        (sum(profile.load.perProvider) * s.hosts + sum(profile.load.fixed));
      const dynamodb = p.cost.dynamodbRead + p.cost.dynamodbWrite - onDemandReadMonthly(modelLoads) + b.monthly;
      // the same units/s in provisioned mode (-c tableCapacity=provisioned:…, auto scaled at AUTOSCALING_TARGET),
      // and with the change feed's items and history (issue 35), written beside each change
      const readPerS = p.readPerS - modelLoads + b.turnover.perS + b.reloads.perS + b.writer.readPerS;
      const writePerS = p.writePerS + b.writer.writePerS;
      const provisioned = provisionedMonthly(readPerS, writePerS, { indexes: GSIS.length });
      const provisionedFeed = provisionedMonthly(readPerS, writePerS + feed.feedItemWriteUnitsPerS + feed.historyWriteUnitsPerS, {
        indexes: GSIS.length,
      });
      const burstLine = (x: typeof b, how: string) =>
        `a deploy of ${x.deploy.containers} forest containers loading within a second${x.deploy.steps > 1 ? ` at each of its ${x.deploy.steps} steps` : ''}, the image ${x.deploy.ageS} s old (${how}): ` +
        `each log partition ${Math.round(x.deploy.log.units).toLocaleString('en-US')} read units (${pct(x.deploy.log.share)} of its limit + ${pct(logSteady)} steady = ${pct(x.deploy.log.share + logSteady)}; ${r1(x.deploy.log.secondsOfCapacity)} s of its capacity), ` +
        `each image chunk ${Math.round(x.deploy.chunk.units)} (${pct(x.deploy.chunk.share + chunkSteady)}), the manifest ${Math.round(x.deploy.manifest.units)} (${pct(x.deploy.manifest.share)})`;
      const floor = logFloor(p, profile, d, logBytesPerS);
      rep.say(`  between requests: ${burstLine(b, `FOREST_IMAGE_INTERVAL_S ${lambdaConfig.imageIntervalS} + the writer's minute`)}`);
      rep.say(`  with the deploy procedure: ${burstLine(windowed, `npx berth image --every ${DEPLOY_WINDOW_EVERY_S} through the deploy`)}`);
      rep.say(
        `  with the deploy procedure and -c forestDeploy=linear: ${burstLine(linear, `npx berth image --every ${DEPLOY_WINDOW_EVERY_S} through the deploy`)}`,
      );
      rep.say(
        `  between requests, monthly: turnover (a container every ${a.containerLifetimeS / 3600} h) ${money(b.turnover.monthly)}, reloads every ${lambdaConfig.snapshotResyncS} s (${pct(between.resyncIndexShare)} through the index) ${money(b.reloads.monthly)}, the image writer ${money(b.writer.monthly)}: ${money(b.monthly)}; DynamoDB with them ${money(dynamodb)}`,
      );
      rep.say(
        `  DynamoDB in provisioned mode (-c tableCapacity=provisioned:…, auto scaled at ${pct(AUTOSCALING_TARGET)}): ${Math.round(provisioned.readCapacity).toLocaleString('en-US')} read + ${Math.round(provisioned.writeCapacity).toLocaleString('en-US')} write capacity units, ${money(provisioned.total)} (reads ${money(provisioned.read)}, writes ${money(provisioned.write)}) against ${money(dynamodb)} on demand; with the change feed's items and history ${money(provisionedFeed.total)}`,
      );
      rep.say(
        `  the change log's busiest partition: ${floor.map((x) => `${x.setting} ${pct(x.share)}`).join(', ')} (every forest-served poll reads every partition: ${Math.round(floor[0]!.polls)} polls/s x at least 1 unit = ${pct(floor[0]!.polls / 3000)} of each, whatever the shard count)`,
      );
      rep.emit({
        kind: 'between-projection',
        scenario: s.name,
        warm,
        deploy: {
          containers: b.deploy.containers,
          image_age_s: b.deploy.ageS,
          log_partition: {
            units: Math.round(b.deploy.log.units),
            share: r2(b.deploy.log.share),
            steady_share: r2(logSteady),
            seconds_of_capacity: r1(b.deploy.log.secondsOfCapacity),
          },
          chunk_partition: { units: Math.round(b.deploy.chunk.units), share: r2(b.deploy.chunk.share) },
          manifest: { units: Math.round(b.deploy.manifest.units), share: r2(b.deploy.manifest.share) },
          chunk_steady_share: r2(chunkSteady),
          with_procedure: {
            image_age_s: windowed.deploy.ageS,
            log_partition: {
              units: Math.round(windowed.deploy.log.units),
              share: r2(windowed.deploy.log.share),
              seconds_of_capacity: r1(windowed.deploy.log.secondsOfCapacity),
            },
          },
          with_procedure_linear: {
            steps: linear.deploy.steps,
            containers_per_step: linear.deploy.containers,
            log_partition: { units: Math.round(linear.deploy.log.units), share: r2(linear.deploy.log.share) },
            chunk_partition: { units: Math.round(linear.deploy.chunk.units), share: r2(linear.deploy.chunk.share) },
          },
        },
        log_partition_share: Object.fromEntries(floor.map((x) => [x.setting, r2(x.share)])),
        monthly_usd: {
          turnover: Math.round(b.turnover.monthly),
          reloads: Math.round(b.reloads.monthly),
          writer: Math.round(b.writer.monthly),
          total: Math.round(b.monthly),
        },
        dynamodb_with_between_usd: Math.round(dynamodb),
        dynamodb_provisioned_usd: Math.round(provisioned.total),
        dynamodb_provisioned_with_feed_usd: Math.round(provisionedFeed.total),
        provisioned_capacity: { read: Math.round(provisioned.readCapacity), write: Math.round(provisioned.writeCapacity) },
      });
    }
    // the container-count range
    const range = [10, 50, 200].map((w) => {
      const q = project(profile, rates, s.hosts, { ...a, warm: w }, d);
      const f = q.perLabel.filter((x) => x.poll);
      const n = f.reduce((k, x) => k + x.rate, 0);
      return { w, units: n ? f.reduce((k, x) => k + x.readPerRequest * x.rate, 0) / n : 0, hot: q.hottest, cost: q.cost.total };
    });
    rep.say(
      `  with W warm containers per forest-served Lambda: ${range.map((x) => `W=${x.w}: ${r2(x.units)} read units/forest request, ${x.hot.family} ${Math.round(x.hot.utilisation * 100)} %, ${money(x.cost)}/month`).join('; ')}`,
    );
    rep.emit({
      kind: 'projection',
      scenario: s.name,
      hosts: s.hosts,
      claims_per_s: s.claimsPerS,
      candidates_per_s: s.candidatesPerS,
      read_units_per_s: Math.round(p.readPerS),
      write_units_per_s: Math.round(p.writePerS),
      forest_read_units_per_request: r2(forestUnits),
      warm: Object.fromEntries(p.lambdas.filter((x) => x.pollsPerS > 0).map((x) => [x.lambda, x.warm])),
      hottest: {
        family: p.hottest.family,
        read_per_s: r1(p.hottest.hotReadPerS),
        write_per_s: r1(p.hottest.hotWritePerS),
        utilisation: r2(p.hottest.utilisation),
      },
      ceiling_claims_per_s: Number.isFinite(cap.multiple) ? Math.round(s.claimsPerS * cap.multiple) : null,
      monthly_usd: Object.fromEntries(Object.entries(p.cost).map(([k, v]) => [k, Math.round(v * 100) / 100])),
      feed: {
        changes_per_s: r1(changesPerS),
        events_per_s: r1(feed.eventsPerS),
        invocations_per_s: r2(feed.invocationsPerS),
        gb_seconds_per_s: r2(feed.gbSecondsPerS),
        history_write_units_per_s: r1(feed.historyWriteUnitsPerS),
        feed_item_write_units_per_s: r1(feed.feedItemWriteUnitsPerS),
        feed_shards: feed.shards,
        partition_utilisation: r2(feed.partitionUtilisation),
        monthly_usd: Object.fromEntries(Object.entries(feed.monthly).map(([k, v]) => [k, Math.round(v * 100) / 100])),
      },
      range: range.map((x) => ({
        warm: x.w,
        forest_read_units: r2(x.units),
        hottest: x.hot.family,
        utilisation: r2(x.hot.utilisation),
        monthly_usd: Math.round(x.cost),
      })),
    });
  }
  return out;
}
