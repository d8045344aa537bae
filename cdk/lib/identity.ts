/**
 * Who may call the deployed APIs, decided at synth time and failing closed: there is no
 * default identity mode, an unknown one is refused, and each mode's settings are checked
 * before anything is built (`cdk synth` / `cdk deploy` stop with the message).
 *
 *   keystone  X-Auth-Token validated against an https Keystone by a Lambda authorizer
 *   jwt       Authorization: Bearer <JWT> validated by API Gateway against an https
 *             OIDC issuer and audience; claims mapped to user, project and roles
 *   insecure-none-tests-only
 *             no authorizer at all, request headers are the identity (Placement's
 *             noauth2): for throwaway test stacks only; cdk-nag's APIG4 finding is left
 *             standing, so it does not synthesise with the AwsSolutions checks on
 */
import { Duration, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { parseClaimMapping } from '../../functions/core/policy/identity.js';

export const INSECURE_NO_AUTH = 'insecure-none-tests-only';
export const IDENTITY_MODES = ['keystone', 'jwt', INSECURE_NO_AUTH] as const;
export type IdentityMode = (typeof IDENTITY_MODES)[number];

/** API Gateway's cache of the Keystone authorizer's answers: the longest a revoked token keeps working */
export const DEFAULT_AUTHORIZER_CACHE_TTL_S = 60;
export const MAX_AUTHORIZER_CACHE_TTL_S = 300;

export interface IdentityOptions {
  mode: IdentityMode;
  jwtIssuer?: string;
  jwtAudience?: string[];
  /** JSON claim mapping (functions/core/policy/identity.ts), e.g. {"project":"custom:tenant"} */
  claimMapping?: string;
  keystoneUrl?: string;
  keystoneUsername?: string;
  /** Secrets Manager secret holding the service user's password (its complete ARN) */
  keystonePasswordSecretArn?: string;
  keystoneProject?: string;
  /**
   * the customer-managed KMS key the password secret is encrypted with (its key ARN). Not
   * needed for the default `aws/secretsmanager` key, whose policy lets any principal of the
   * account that may read the secret decrypt it through Secrets Manager; a customer key's
   * policy does not, so the authorizer gets kms:Decrypt on this key, through Secrets
   * Manager only.
   */
  keystoneSecretKmsKeyArn?: string;
  /** seconds API Gateway caches a Keystone authorizer answer (0–300, default 60) */
  authorizerCacheTtlS?: number;
}

export class IdentityConfigError extends Error {}

const HOW =
  'choose one with -c identity=keystone (and -c keystoneUrl=https://… -c keystonePasswordSecretArn=arn:aws:secretsmanager:…) ' +
  'or -c identity=jwt (and -c jwtIssuer=https://… -c jwtAudience=<client id>)';

// a complete secret ARN: the name ends with Secrets Manager's 6-character suffix
const SECRET_ARN = /^arn:aws(-[a-z]+)*:secretsmanager:[a-z]{2}(-[a-z]+)+-\d:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$/;

// a key ARN (an alias cannot be granted kms:Decrypt by ARN); multi-Region keys start mrk-
const KMS_KEY_ARN =
  /^arn:aws(-[a-z]+)*:kms:[a-z]{2}(-[a-z]+)+-\d:\d{12}:key\/(mrk-[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

function httpsUrl(value: string | undefined, name: string): string {
  if (!value) throw new IdentityConfigError(`${name} is required`);
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new IdentityConfigError(`${name} ${JSON.stringify(value)} is not a URL`);
  }
  if (u.protocol !== 'https:') throw new IdentityConfigError(`${name} must be an https:// URL (got ${JSON.stringify(value)})`);
  if (u.username || u.password) throw new IdentityConfigError(`${name} must not carry credentials`);
  return value;
}

/** The identity settings, checked; throws IdentityConfigError saying what is wrong and how to fix it. */
export function validateIdentity(o: Partial<IdentityOptions> | undefined): IdentityOptions {
  const mode = o?.mode as string | undefined;
  if (!mode) throw new IdentityConfigError(`Berth has no identity mode: ${HOW}. Without one the APIs would be open to anyone.`);
  if (!(IDENTITY_MODES as readonly string[]).includes(mode)) {
    throw new IdentityConfigError(`unknown identity mode ${JSON.stringify(mode)}: ${HOW}.`);
  }
  const opts = { ...o, mode } as IdentityOptions;
  if (opts.claimMapping !== undefined && mode !== 'jwt') throw new IdentityConfigError('claimMapping applies to -c identity=jwt only');
  if (mode === 'jwt') {
    httpsUrl(opts.jwtIssuer, 'jwtIssuer');
    const aud = (opts.jwtAudience ?? []).filter((a) => a.trim() !== '');
    if (!aud.length) throw new IdentityConfigError('jwtAudience is required (the app client id(s) tokens are issued for)');
    opts.jwtAudience = aud;
    if (opts.claimMapping !== undefined) {
      try {
        parseClaimMapping(opts.claimMapping);
      } catch (e) {
        throw new IdentityConfigError(`claimMapping: ${(e as Error).message.replace(/^claim mapping: /, '')}`);
      }
    }
  }
  if (mode === 'keystone') {
    httpsUrl(opts.keystoneUrl, 'keystoneUrl');
    if (!opts.keystonePasswordSecretArn)
      throw new IdentityConfigError('keystonePasswordSecretArn is required (the service user’s password in Secrets Manager)');
    if (!SECRET_ARN.test(opts.keystonePasswordSecretArn)) {
      throw new IdentityConfigError(
        `keystonePasswordSecretArn ${JSON.stringify(opts.keystonePasswordSecretArn)} is not a complete Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>-<6 characters>)`,
      );
    }
    if (opts.keystoneUsername !== undefined && opts.keystoneUsername.trim() === '') throw new IdentityConfigError('keystoneUsername is empty');
    if (opts.keystoneSecretKmsKeyArn !== undefined && !KMS_KEY_ARN.test(opts.keystoneSecretKmsKeyArn)) {
      throw new IdentityConfigError(
        `keystoneSecretKmsKeyArn ${JSON.stringify(opts.keystoneSecretKmsKeyArn)} is not a KMS key ARN (arn:aws:kms:<region>:<account>:key/<key id>; an alias will not do)`,
      );
    }
  }
  if (mode !== 'keystone') {
    for (const k of ['keystoneUrl', 'keystonePasswordSecretArn', 'keystoneUsername', 'keystoneProject', 'keystoneSecretKmsKeyArn'] as const) {
      if (opts[k] !== undefined) throw new IdentityConfigError(`${k} applies to -c identity=keystone only`);
    }
  }
  if (mode !== 'jwt') {
    for (const k of ['jwtIssuer'] as const) if (opts[k] !== undefined) throw new IdentityConfigError(`${k} applies to -c identity=jwt only`);
    if (opts.jwtAudience?.length) throw new IdentityConfigError('jwtAudience applies to -c identity=jwt only');
  }
  const ttl = opts.authorizerCacheTtlS;
  if (ttl !== undefined && (!Number.isInteger(ttl) || ttl < 0 || ttl > MAX_AUTHORIZER_CACHE_TTL_S)) {
    throw new IdentityConfigError(`authorizerCacheTtl must be a whole number of seconds from 0 to ${MAX_AUTHORIZER_CACHE_TTL_S}`);
  }
  return opts;
}

/**
 * Let the Keystone authorizer read its password: GetSecretValue on the secret and, with a
 * customer-managed key, kms:Decrypt on that key alone, only through Secrets Manager in
 * the secret's region.
 */
export function grantKeystoneSecret(scope: Construct, fn: lambda.IFunction, o: IdentityOptions): void {
  secretsmanager.Secret.fromSecretCompleteArn(scope, 'KeystoneSecret', o.keystonePasswordSecretArn!).grantRead(fn);
  if (o.keystoneSecretKmsKeyArn) {
    const region = o.keystonePasswordSecretArn!.split(':')[3];
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['kms:Decrypt'],
        resources: [o.keystoneSecretKmsKeyArn],
        conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${region}.${Stack.of(scope).urlSuffix}` } },
      }),
    );
  }
}

export function authorizerCacheTtl(o: IdentityOptions): Duration {
  return Duration.seconds(o.authorizerCacheTtlS ?? DEFAULT_AUTHORIZER_CACHE_TTL_S);
}

/** The API functions' environment for this identity mode (functions/config.ts reads it). */
export function identityEnvironment(o: IdentityOptions): Record<string, string> {
  if (o.mode === INSECURE_NO_AUTH) return { AUTH_STRATEGY: 'noauth2', BERTH_INSECURE_NOAUTH: 'true' };
  return { AUTH_STRATEGY: 'authorizer', ...(o.claimMapping ? { JWT_CLAIM_MAPPING: o.claimMapping } : {}) };
}
