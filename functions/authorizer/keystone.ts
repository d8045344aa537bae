/**
 * API Gateway HTTP API Lambda authorizer (payload 2.0, simple responses) for the
 * OpenStack-native identity mode: X-Auth-Token is validated against the configured
 * Keystone and {userId, projectId, roles, systemScope} is passed to the API functions
 * as the authorizer context. Tokens are never logged.
 */
import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { log } from '../observability/log.js';
import { config, type KeystoneSettings } from '../config.js';
import { KeystoneValidator, type KeystoneConfig } from './keystone-client.js';

export interface SimpleAuthorizerResult {
  isAuthorized: boolean;
  context?: Record<string, string>;
}

export function keystoneConfig(k: KeystoneSettings = config().keystone): KeystoneConfig {
  const need = (v: string | undefined, name: string) => {
    if (!v) throw new Error(`${name} is not configured`);
    return v;
  };
  return {
    url: need(k.url, 'KEYSTONE_URL'),
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
