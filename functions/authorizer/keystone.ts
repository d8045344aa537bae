/**
 * API Gateway HTTP API Lambda authorizer (payload 2.0, simple responses) for the
 * OpenStack-native identity mode: X-Auth-Token is validated against the configured
 * Keystone and {userId, projectId, roles, systemScope} is passed to the API functions
 * as the authorizer context. Tokens are never logged.
 */
import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { log } from '../observability/log.js';
import { KeystoneValidator, type KeystoneConfig } from './keystone-client.js';

export interface SimpleAuthorizerResult {
  isAuthorized: boolean;
  context?: Record<string, string>;
}

export function keystoneConfig(env: Record<string, string | undefined> = process.env): KeystoneConfig {
  const need = (k: string) => {
    const v = env[k];
    if (!v) throw new Error(`${k} is not configured`);
    return v;
  };
  return {
    url: need('KEYSTONE_URL'),
    username: need('KEYSTONE_USERNAME'),
    password: need('KEYSTONE_PASSWORD'),
    userDomain: env.KEYSTONE_USER_DOMAIN ?? 'Default',
    project: env.KEYSTONE_PROJECT ?? 'service',
    projectDomain: env.KEYSTONE_PROJECT_DOMAIN ?? 'Default',
    cacheTtlS: Number(env.KEYSTONE_CACHE_TTL_S ?? 300),
    timeoutMs: Number(env.KEYSTONE_TIMEOUT_MS ?? 5000),
  };
}

let validator: KeystoneValidator | undefined;

export function makeAuthorizer(v: () => Promise<KeystoneValidator> | KeystoneValidator) {
  return async (event: APIGatewayRequestAuthorizerEventV2): Promise<SimpleAuthorizerResult> => {
    const headers = Object.fromEntries(Object.entries(event.headers ?? {}).map(([k, val]) => [k.toLowerCase(), val]));
    const token = headers['x-auth-token'];
    if (!token) return { isAuthorized: false };
    try {
      const identity = await (await v()).validate(token);
      if (!identity?.userId) return { isAuthorized: false };
      return {
        isAuthorized: true,
        context: {
          userId: identity.userId,
          projectId: identity.projectId ?? '',
          roles: identity.roles.join(','),
          systemScope: identity.systemScope ?? '',
          projectName: identity.projectName ?? '',
          projectDomainId: identity.projectDomainId ?? '',
          isAdminProject: identity.isAdminProject === undefined ? '' : String(identity.isAdminProject),
        },
      };
    } catch (e) {
      log.error('keystone authorizer error', { error: String((e as Error).message) });
      return { isAuthorized: false };
    }
  };
}

/** Password from the environment, or from Secrets Manager when KEYSTONE_PASSWORD_SECRET_ARN is set. */
async function loadValidator(): Promise<KeystoneValidator> {
  if (validator) return validator;
  const env = { ...process.env };
  if (!env.KEYSTONE_PASSWORD && env.KEYSTONE_PASSWORD_SECRET_ARN) {
    const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
    const r = await new SecretsManagerClient({}).send(new GetSecretValueCommand({ SecretId: env.KEYSTONE_PASSWORD_SECRET_ARN }));
    env.KEYSTONE_PASSWORD = r.SecretString;
  }
  validator = new KeystoneValidator(keystoneConfig(env));
  return validator;
}

export const handler = makeAuthorizer(loadValidator);
