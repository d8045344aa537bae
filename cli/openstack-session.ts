/**
 * A session with an OpenStack service (Placement, the bare-metal service) for the
 * operators' import and export commands, with credentials as the OpenStack clients
 * take them — `openstackSession(opts)`, in order:
 *
 *  1. `--token T` (opts.token): T sent as X-Auth-Token to the given URL (Placement's
 *     noauth2 takes `admin`; any Keystone token works too);
 *  2. `OS_AUTH_TYPE=admin_token` (or `token_endpoint`) with `OS_TOKEN` and `OS_ENDPOINT`
 *     (or the URL): the same; `OS_AUTH_TYPE=none` / `noauth`: no token (Ironic's noauth);
 *  3. `OS_CLOUD=name`: that cloud of clouds.yaml (`OS_CLIENT_CONFIG_FILE`, ./clouds.yaml,
 *     ~/.config/openstack/clouds.yaml, /etc/openstack/clouds.yaml; secure.yaml beside it
 *     merged in), read as the variables below would be;
 *  4. `OS_AUTH_URL` with `OS_USERNAME` / `OS_USER_ID`, `OS_PASSWORD`, `OS_PROJECT_NAME` /
 *     `OS_PROJECT_ID`, `OS_USER_DOMAIN_NAME|ID`, `OS_PROJECT_DOMAIN_NAME|ID` (or
 *     `OS_SYSTEM_SCOPE=all`): Keystone v3 password authentication (POST
 *     /v3/auth/tokens); `OS_AUTH_TYPE=v3applicationcredential` with
 *     `OS_APPLICATION_CREDENTIAL_ID` / `_SECRET`; `OS_AUTH_TYPE=v3token` with `OS_TOKEN`.
 *     The service's endpoint is the URL given, else the catalog's (its service type,
 *     `OS_INTERFACE` — public by default —, `OS_REGION_NAME`). A token that expires
 *     during a long import is renewed (one new authentication on a 401).
 *
 * Every request is retried on a connection error, a 429 or a 502/503/504 (and a 500
 * for reads), with backoff, a bounded number of times. TLS: Node's own trust store, plus
 * NODE_EXTRA_CA_CERTS (set it to what OS_CACERT names).
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';

export type ServiceType = 'placement' | 'baremetal';

export interface SessionOptions {
  serviceType: ServiceType;
  /** the service's URL (`--from`, `--to`, `--against`): the endpoint, whatever the catalog says */
  endpoint?: string;
  /** `--token`: sent as it is */
  token?: string;
  /** the environment the OS_* variables come from (default process.env) */
  env?: Record<string, string | undefined>;
  /** attempts per request (default 6) */
  attempts?: number;
  /** per-request timeout (default 120 s) */
  timeoutMs?: number;
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** the parsed body (undefined if empty or not JSON) */
  json: any;
}

export interface OpenStackSession {
  /** the service's base URL, without a trailing slash */
  endpoint: string;
  /** how it authenticates, for messages (never the secret) */
  auth: string;
  request(method: string, path: string, opts?: { body?: unknown; headers?: Record<string, string> }): Promise<HttpAnswer>;
  /** the headers that authenticate a request now (X-Auth-Token, if any), for a caller that sends its own */
  authHeaders(): Record<string, string>;
}

/** Credentials that do not lead anywhere (a missing variable, no such cloud, Keystone said no). */
export class SessionError extends Error {}

interface Credentials {
  authType: string;
  authUrl?: string;
  token?: string;
  endpoint?: string;
  username?: string;
  userId?: string;
  password?: string;
  userDomainName?: string;
  userDomainId?: string;
  projectName?: string;
  projectId?: string;
  projectDomainName?: string;
  projectDomainId?: string;
  domainName?: string;
  domainId?: string;
  systemScope?: string;
  appCredId?: string;
  appCredName?: string;
  appCredSecret?: string;
  region?: string;
  interface?: string;
  /** clouds.yaml's `<service>_endpoint_override` */
  endpointOverride?: string;
  /** where they came from, for messages */
  from: string;
}

function fromEnv(env: Record<string, string | undefined>, service: ServiceType): Credentials {
  return {
    authType: (env.OS_AUTH_TYPE ?? (env.OS_AUTH_URL ? 'password' : env.OS_TOKEN ? 'admin_token' : '')).toLowerCase(),
    authUrl: env.OS_AUTH_URL,
    token: env.OS_TOKEN,
    endpoint: env.OS_ENDPOINT ?? env.OS_URL,
    username: env.OS_USERNAME,
    userId: env.OS_USER_ID,
    password: env.OS_PASSWORD,
    userDomainName: env.OS_USER_DOMAIN_NAME ?? env.OS_DEFAULT_DOMAIN_NAME ?? env.OS_DOMAIN_NAME,
    userDomainId: env.OS_USER_DOMAIN_ID ?? env.OS_DEFAULT_DOMAIN_ID ?? env.OS_DOMAIN_ID,
    projectName: env.OS_PROJECT_NAME ?? env.OS_TENANT_NAME,
    projectId: env.OS_PROJECT_ID ?? env.OS_TENANT_ID,
    projectDomainName: env.OS_PROJECT_DOMAIN_NAME ?? env.OS_DEFAULT_DOMAIN_NAME ?? env.OS_DOMAIN_NAME,
    projectDomainId: env.OS_PROJECT_DOMAIN_ID ?? env.OS_DEFAULT_DOMAIN_ID ?? env.OS_DOMAIN_ID,
    systemScope: env.OS_SYSTEM_SCOPE,
    appCredId: env.OS_APPLICATION_CREDENTIAL_ID,
    appCredName: env.OS_APPLICATION_CREDENTIAL_NAME,
    appCredSecret: env.OS_APPLICATION_CREDENTIAL_SECRET,
    region: env.OS_REGION_NAME,
    interface: env.OS_INTERFACE ?? env.OS_ENDPOINT_TYPE,
    endpointOverride: env[`OS_${service.toUpperCase()}_ENDPOINT_OVERRIDE`],
    from: 'OS_* variables',
  };
}

/** The clouds.yaml files the OpenStack clients read, in their order. */
export function cloudsYamlPaths(env: Record<string, string | undefined>): string[] {
  if (env.OS_CLIENT_CONFIG_FILE) return [env.OS_CLIENT_CONFIG_FILE];
  return [join(process.cwd(), 'clouds.yaml'), join(env.HOME ?? homedir(), '.config', 'openstack', 'clouds.yaml'), '/etc/openstack/clouds.yaml'];
}

function fromCloud(name: string, env: Record<string, string | undefined>, service: ServiceType): Credentials {
  const file = cloudsYamlPaths(env).find((p) => existsSync(p));
  if (!file) throw new SessionError(`OS_CLOUD=${name}, but no clouds.yaml was found (looked in ${cloudsYamlPaths(env).join(', ')})`);
  const clouds = (parseYaml(readFileSync(file, 'utf8'))?.clouds ?? {}) as Record<string, any>;
  const secureFile = env.OS_CLIENT_SECURE_FILE ?? join(dirname(file), 'secure.yaml');
  const secure = existsSync(secureFile) ? ((parseYaml(readFileSync(secureFile, 'utf8'))?.clouds ?? {}) as Record<string, any>) : {};
  const c = clouds[name];
  if (!c) throw new SessionError(`cloud ${name} is not in ${file} (it has: ${Object.keys(clouds).join(', ') || 'none'})`);
  const auth = { ...(c.auth ?? {}), ...(secure[name]?.auth ?? {}) };
  return {
    authType: String(c.auth_type ?? (auth.token && !auth.auth_url ? 'admin_token' : 'password')).toLowerCase(),
    authUrl: auth.auth_url,
    token: auth.token,
    endpoint: auth.endpoint,
    username: auth.username,
    userId: auth.user_id,
    password: auth.password,
    userDomainName: auth.user_domain_name ?? auth.domain_name,
    userDomainId: auth.user_domain_id ?? auth.domain_id,
    projectName: auth.project_name ?? auth.tenant_name,
    projectId: auth.project_id ?? auth.tenant_id,
    projectDomainName: auth.project_domain_name ?? auth.domain_name,
    projectDomainId: auth.project_domain_id ?? auth.domain_id,
    systemScope: auth.system_scope,
    appCredId: auth.application_credential_id,
    appCredName: auth.application_credential_name,
    appCredSecret: auth.application_credential_secret,
    region: c.region_name ?? env.OS_REGION_NAME,
    interface: c.interface ?? c.endpoint_type ?? env.OS_INTERFACE,
    endpointOverride: c[`${service}_endpoint_override`],
    from: `cloud ${name} of ${file}`,
  };
}

const trim = (u: string) => u.replace(/\/+$/, '');

/** Keystone v3's auth body for these credentials (password, application credential or token). */
export function keystoneAuthBody(c: Credentials): Record<string, unknown> {
  const domain = (name?: string, id?: string) => (id ? { id } : name ? { name } : undefined);
  let identity: Record<string, unknown>;
  if (c.authType === 'v3applicationcredential' || c.authType === 'application_credential') {
    if (!c.appCredSecret || !(c.appCredId || c.appCredName))
      throw new SessionError(`${c.from}: an application credential needs its id (or name) and secret`);
    const cred = c.appCredId
      ? { id: c.appCredId, secret: c.appCredSecret }
      : {
          name: c.appCredName,
          secret: c.appCredSecret,
          user: c.userId ? { id: c.userId } : { name: c.username, domain: domain(c.userDomainName, c.userDomainId) },
        };
    return { auth: { identity: { methods: ['application_credential'], application_credential: cred } } };
  }
  if (c.authType === 'v3token' || c.authType === 'token') {
    if (!c.token) throw new SessionError(`${c.from}: token authentication needs OS_TOKEN`);
    identity = { methods: ['token'], token: { id: c.token } };
  } else {
    if (!c.password || !(c.username || c.userId))
      throw new SessionError(`${c.from}: password authentication needs a user (OS_USERNAME or OS_USER_ID) and OS_PASSWORD`);
    const user = c.userId
      ? { id: c.userId, password: c.password }
      : { name: c.username, domain: domain(c.userDomainName, c.userDomainId) ?? { id: 'default' }, password: c.password };
    identity = { methods: ['password'], password: { user } };
  }
  let scope: Record<string, unknown> | undefined;
  if (c.systemScope) scope = { system: { all: true } };
  else if (c.projectId) scope = { project: { id: c.projectId } };
  else if (c.projectName) scope = { project: { name: c.projectName, domain: domain(c.projectDomainName, c.projectDomainId) ?? { id: 'default' } } };
  else if (c.domainId || c.domainName) scope = { domain: domain(c.domainName, c.domainId) };
  return { auth: { identity, ...(scope ? { scope } : {}) } };
}

interface CatalogEntry {
  type: string;
  endpoints: Array<{ interface: string; region?: string; region_id?: string; url: string }>;
}

/** The service's URL in a Keystone catalog (its type, the interface, the region if given). */
export function catalogEndpoint(catalog: CatalogEntry[], service: ServiceType, iface = 'public', region?: string): string | undefined {
  const want = iface.replace(/URL$/, '');
  for (const s of catalog) {
    if (s.type !== service) continue;
    const e = s.endpoints.find((x) => x.interface === want && (!region || x.region === region || x.region_id === region));
    if (e) return trim(e.url);
  }
  return undefined;
}

const RETRY_STATUS = new Set([429, 502, 503, 504]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A session for `opts.serviceType`, with credentials found as the module comment says. */
export async function openstackSession(opts: SessionOptions): Promise<OpenStackSession> {
  const env = opts.env ?? process.env;
  const attempts = Math.max(1, opts.attempts ?? 6);
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const given = opts.endpoint ? trim(opts.endpoint) : undefined;

  /** one HTTP exchange with retries (connection errors, 429, 502-504; a 500 only for reads) */
  const exchange = async (method: string, url: string, headers: Record<string, string>, body?: string): Promise<HttpAnswer> => {
    for (let attempt = 1; ; attempt++) {
      let answer: HttpAnswer | undefined;
      let failure: unknown;
      try {
        const r = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(timeoutMs) });
        const text = await r.text();
        let json: any;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        answer = { status: r.status, headers: r.headers, text, json };
      } catch (e) {
        failure = e;
      }
      const retry = answer ? RETRY_STATUS.has(answer.status) || (answer.status === 500 && method === 'GET') : true;
      if (!retry || attempt >= attempts) {
        if (answer) return answer;
        throw new SessionError(`${method} ${url}: ${(failure as Error)?.message ?? failure} (after ${attempt} attempts)`);
      }
      await sleep(Math.min(10_000, 200 * 2 ** attempt) * (0.5 + Math.random() / 2));
    }
  };

  let token: string | undefined;
  let endpoint: string | undefined = given;
  let auth: string;
  let renew: (() => Promise<void>) | undefined;

  const typeFromEnv = (env.OS_AUTH_TYPE ?? '').toLowerCase();
  if (opts.token !== undefined) {
    token = opts.token;
    auth = 'the token given (--token)';
  } else if (['admin_token', 'token_endpoint', 'none', 'noauth'].includes(typeFromEnv) || (!env.OS_CLOUD && !env.OS_AUTH_URL && env.OS_TOKEN)) {
    const noAuth = typeFromEnv === 'none' || typeFromEnv === 'noauth';
    token = noAuth ? undefined : env.OS_TOKEN;
    if (!noAuth && !token) throw new SessionError(`OS_AUTH_TYPE=${typeFromEnv} needs OS_TOKEN`);
    endpoint ??= env.OS_ENDPOINT ? trim(env.OS_ENDPOINT) : undefined;
    auth = noAuth ? 'no authentication (OS_AUTH_TYPE=none)' : `a fixed token (OS_AUTH_TYPE=${typeFromEnv || 'admin_token'})`;
  } else if (env.OS_CLOUD || env.OS_AUTH_URL) {
    const c = env.OS_CLOUD ? fromCloud(env.OS_CLOUD, env, opts.serviceType) : fromEnv(env, opts.serviceType);
    if (['admin_token', 'token_endpoint', 'none', 'noauth'].includes(c.authType)) {
      token = c.authType === 'none' || c.authType === 'noauth' ? undefined : c.token;
      endpoint ??= c.endpointOverride ?? (c.endpoint ? trim(c.endpoint) : undefined);
      auth = `${c.authType} from ${c.from}`;
    } else {
      if (!c.authUrl) throw new SessionError(`${c.from}: no auth_url (OS_AUTH_URL)`);
      const base = trim(c.authUrl);
      const tokensUrl = `${/\/v3$/.test(base) ? base : `${base}/v3`}/auth/tokens`;
      const body = JSON.stringify(keystoneAuthBody(c));
      renew = async () => {
        const r = await exchange('POST', tokensUrl, { 'content-type': 'application/json', accept: 'application/json' }, body);
        if (r.status !== 201 && r.status !== 200)
          throw new SessionError(
            `Keystone at ${base} refused the credentials of ${c.from}: ${r.status} ${r.json?.error?.message ?? r.text.slice(0, 200)}`,
          );
        token = r.headers.get('x-subject-token') ?? undefined;
        if (!token) throw new SessionError(`Keystone at ${base} answered without a token`);
        if (!endpoint) {
          endpoint = c.endpointOverride ?? catalogEndpoint(r.json?.token?.catalog ?? [], opts.serviceType, c.interface ?? 'public', c.region);
          if (!endpoint)
            throw new SessionError(
              `the Keystone catalog has no ${c.interface ?? 'public'} ${opts.serviceType} endpoint${c.region ? ` in region ${c.region}` : ''}: give the URL`,
            );
        }
      };
      await renew();
      const who =
        c.appCredId || c.appCredName ? 'an application credential' : c.authType.includes('token') ? 'a token' : `user ${c.username ?? c.userId}`;
      auth = `Keystone ${base} (${who} from ${c.from})`;
    }
  } else if (given) {
    auth = 'no credentials (none given: use --token, OS_* variables or OS_CLOUD)';
  } else {
    throw new SessionError('no credentials: give --token, OS_AUTH_TYPE=admin_token with OS_TOKEN, OS_CLOUD, or OS_AUTH_URL and the rest');
  }
  if (!endpoint) throw new SessionError(`no ${opts.serviceType} URL: give it (or OS_ENDPOINT)`);
  const base = endpoint;

  return {
    endpoint: base,
    auth,
    authHeaders: (): Record<string, string> => (token !== undefined ? { 'x-auth-token': token } : {}),
    async request(method, path, ro = {}) {
      const send = () =>
        exchange(
          method,
          base + path,
          {
            accept: 'application/json',
            ...(token !== undefined ? { 'x-auth-token': token } : {}),
            ...(ro.body !== undefined ? { 'content-type': 'application/json' } : {}),
            ...ro.headers,
          },
          ro.body !== undefined ? JSON.stringify(ro.body) : undefined,
        );
      const r = await send();
      if (r.status === 401 && renew) {
        await renew();
        return send();
      }
      return r;
    },
  };
}
