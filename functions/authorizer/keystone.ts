/**
 * API Gateway HTTP API Lambda authorizer (payload 2.0, simple responses) for the
 * OpenStack-native identity mode: X-Auth-Token is validated against the configured
 * Keystone and {userId, projectId | domainId | systemScope, roles, …} is passed to the
 * API functions as the authorizer context. Tokens are never logged.
 *
 * An invalid token is a deny (API Gateway caches it for its TTL, harmlessly); Keystone
 * failing (unreachable, 5xx, timeout) is an error, which API Gateway answers with a 500
 * and does not turn into a cached deny — so a Keystone blip does not lock users out.
 */
import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { log } from '../observability/log.js';
import { config, type KeystoneSettings } from '../config.js';
import { KeystoneValidator, type KeystoneConfig } from './keystone-client.js';
import type { Identity } from '../core/policy/identity.js';

export interface SimpleAuthorizerResult {
  isAuthorized: boolean;
  context?: Record<string, string>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** KEYSTONE_URL must be https (the service password travels to it); plain http only to this machine (tests). */
export function checkKeystoneUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`KEYSTONE_URL ${JSON.stringify(url)} is not a URL`);
  }
  if (u.protocol === 'https:') return url;
  if (u.protocol === 'http:' && LOOPBACK.has(u.hostname)) return url;
  throw new Error(`KEYSTONE_URL must be an https:// URL (got ${u.protocol}//${u.host})`);
}

export function keystoneConfig(k: KeystoneSettings = config().keystone): KeystoneConfig {
  const need = (v: string | undefined, name: string) => {
    if (!v) throw new Error(`${name} is not configured`);
    return v;
  };
  return {
    url: checkKeystoneUrl(need(k.url, 'KEYSTONE_URL')),
    username: need(k.username, 'KEYSTONE_USERNAME'),
    password: need(k.password, 'KEYSTONE_PASSWORD'),
    userDomain: k.userDomain,
    project: k.project,
    projectDomain: k.projectDomain,
    cacheTtlS: k.cacheTtlS,
    timeoutMs: k.timeoutMs,
  };
}

let validator: KeystoneValidator | undefined;

export function makeAuthorizer(v: () => Promise<KeystoneValidator> | KeystoneValidator) {
  return async (event: APIGatewayRequestAuthorizerEventV2): Promise<SimpleAuthorizerResult> => {
    const headers = Object.fromEntries(Object.entries(event.headers ?? {}).map(([k, val]) => [k.toLowerCase(), val]));
    const token = headers['x-auth-token'];
    if (!token) return { isAuthorized: false };
    let identity: Awaited<ReturnType<KeystoneValidator['validate']>>;
    try {
      identity = await (await v()).validate(token);
    } catch (e) {
      // not a deny: API Gateway would cache that for its whole TTL
      log.error('keystone authorizer error', { error: String((e as Error).message) });
      throw new Error('token validation unavailable');
    }
    if (!identity?.userId) return { isAuthorized: false };
    return { isAuthorized: true, context: authorizerContext({ ...identity, userId: identity.userId }) };
  };
}

/**
 * What the API functions receive (functions/http/identity.ts reads it back): strings
 * only ('' = absent). The roles are a JSON list, so a role name may hold any character
 * (a role named `ops,admin` stays one role, never `ops` and `admin`).
 */
export function authorizerContext(identity: Identity & { userId: string }): Record<string, string> {
  return {
    userId: identity.userId,
    projectId: identity.projectId ?? '',
    domainId: identity.domainId ?? '',
    roles: JSON.stringify(identity.roles),
    systemScope: identity.systemScope ?? '',
    projectName: identity.projectName ?? '',
    projectDomainId: identity.projectDomainId ?? '',
    isAdminProject: identity.isAdminProject === undefined ? '' : String(identity.isAdminProject),
  };
}

/** Password from the environment, or from Secrets Manager when KEYSTONE_PASSWORD_SECRET_ARN is set. */
async function loadValidator(): Promise<KeystoneValidator> {
  if (validator) return validator;
  const k = { ...config().keystone };
  if (!k.password && k.passwordSecretArn) {
    const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
    const r = await new SecretsManagerClient({}).send(new GetSecretValueCommand({ SecretId: k.passwordSecretArn }));
    k.password = r.SecretString;
  }
  validator = new KeystoneValidator(keystoneConfig(k));
  return validator;
}

export const handler = makeAuthorizer(loadValidator);
