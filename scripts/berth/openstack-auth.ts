/**
 * OpenStack credentials for the operators' CLI: where one service of a cloud answers and
 * what to send it, from the usual OS_* variables (as keystoneauth reads them) or flags.
 * Generic over the service (`baremetal`, `placement`, …); the commands add their own
 * flags for the endpoint and the token.
 *
 *   no authentication  OS_AUTH_TYPE=none (or nothing set): the endpoint must be given
 *                      (the command's flag, or OS_ENDPOINT); no token is sent
 *   a fixed token      OS_AUTH_TYPE=admin_token (or token_endpoint) and OS_TOKEN, or the
 *                      command's --token: sent as X-Auth-Token to the endpoint given
 *   Keystone password  OS_AUTH_TYPE=password (or v3password), or OS_AUTH_URL set:
 *                      POST {OS_AUTH_URL}/v3/auth/tokens with OS_USERNAME (or OS_USER_ID),
 *                      OS_PASSWORD, OS_USER_DOMAIN_NAME/_ID (else OS_DEFAULT_DOMAIN_*,
 *                      else "default"), scoped to the system (OS_SYSTEM_SCOPE=all), a
 *                      project (OS_PROJECT_ID, or OS_PROJECT_NAME with
 *                      OS_PROJECT_DOMAIN_NAME/_ID) or a domain (OS_DOMAIN_ID/_NAME); the
 *                      endpoint, unless given, from the token's catalog: the service's
 *                      type, OS_INTERFACE (default public), OS_REGION_NAME
 *
 * Node's fetch trusts the CAs of NODE_EXTRA_CA_CERTS (the counterpart of OS_CACERT).
 */

export type Env = Record<string, string | undefined>;

export interface ServiceSession {
  /** the service's root URL, without a trailing slash */
  endpoint: string;
  /** headers every request carries (X-Auth-Token, if any) */
  headers: Record<string, string>;
  /** how the session authenticates, for messages */
  describe: string;
}

export interface AuthRequest {
  /** the service type in the catalog (`baremetal`, `placement`) */
  service: string;
  /** the endpoint the command was given (a flag); else OS_ENDPOINT, else the catalog */
  endpoint?: string;
  /** a token the command was given (a flag): a fixed token, whatever OS_AUTH_TYPE says */
  token?: string;
  env?: Env;
  fetch?: typeof fetch;
}

export class AuthError extends Error {
  override name = 'AuthError';
}

const trim = (u: string) => u.replace(/\/+$/, '');
const set = (v: string | undefined): v is string => v !== undefined && v !== '';

/** The Keystone v3 base of OS_AUTH_URL (`http://ks:5000` or `…/v3`). */
export function keystoneV3(authUrl: string): string {
  const u = trim(authUrl);
  if (/\/v2\.0$/.test(u)) throw new AuthError(`OS_AUTH_URL ${authUrl} is Keystone v2.0; only v3 is supported`);
  return /\/v3$/.test(u) ? u : `${u}/v3`;
}

/** The body of POST /v3/auth/tokens for password authentication, from OS_* variables. */
export function passwordAuthBody(env: Env): Record<string, unknown> {
  const domain = (id: string | undefined, name: string | undefined) =>
    set(id)
      ? { id }
      : set(name)
        ? { name }
        : set(env.OS_DEFAULT_DOMAIN_ID)
          ? { id: env.OS_DEFAULT_DOMAIN_ID }
          : { name: env.OS_DEFAULT_DOMAIN_NAME || 'Default' };
  if (!set(env.OS_PASSWORD)) throw new AuthError('Keystone password authentication needs OS_PASSWORD');
  let user: Record<string, unknown>;
  if (set(env.OS_USER_ID)) user = { id: env.OS_USER_ID, password: env.OS_PASSWORD };
  else if (set(env.OS_USERNAME))
    user = { name: env.OS_USERNAME, domain: domain(env.OS_USER_DOMAIN_ID, env.OS_USER_DOMAIN_NAME), password: env.OS_PASSWORD };
  else throw new AuthError('Keystone password authentication needs OS_USERNAME or OS_USER_ID');
  let scope: Record<string, unknown> | undefined;
  if (set(env.OS_SYSTEM_SCOPE)) scope = { system: { [env.OS_SYSTEM_SCOPE]: true } };
  else if (set(env.OS_PROJECT_ID)) scope = { project: { id: env.OS_PROJECT_ID } };
  else if (set(env.OS_PROJECT_NAME))
    scope = { project: { name: env.OS_PROJECT_NAME, domain: domain(env.OS_PROJECT_DOMAIN_ID, env.OS_PROJECT_DOMAIN_NAME) } };
  else if (set(env.OS_DOMAIN_ID) || set(env.OS_DOMAIN_NAME))
    scope = { domain: set(env.OS_DOMAIN_ID) ? { id: env.OS_DOMAIN_ID } : { name: env.OS_DOMAIN_NAME } };
  return { auth: { identity: { methods: ['password'], password: { user } }, ...(scope ? { scope } : {}) } };
}

interface CatalogEntry {
  type?: string;
  endpoints?: Array<{ interface?: string; region?: string; region_id?: string; url?: string }>;
}

/** The URL of `service` in a v3 token's catalog, for an interface and (optionally) a region. */
export function catalogEndpoint(catalog: CatalogEntry[] | undefined, service: string, iface = 'public', region?: string): string {
  const want = iface.replace(/URL$/, '');
  const entries = (catalog ?? []).filter((c) => c.type === service);
  const urls = entries
    .flatMap((c) => c.endpoints ?? [])
    .filter((e) => e.interface === want && (!region || e.region_id === region || e.region === region))
    .map((e) => e.url)
    .filter(set);
  if (!urls.length) {
    const seen = (catalog ?? []).map((c) => c.type).filter(set);
    throw new AuthError(
      `no ${want} endpoint of service type ${service}${region ? ` in region ${region}` : ''} in the token's catalog (services: ${seen.join(', ') || 'none'}); give the endpoint instead`,
    );
  }
  return trim(urls[0]!);
}

/** Authenticate as the environment (and the command's flags) say, and find the service. */
export async function openStackSession(req: AuthRequest): Promise<ServiceSession> {
  const env = req.env ?? process.env;
  const doFetch = req.fetch ?? fetch;
  const given = set(req.endpoint) ? req.endpoint : set(env.OS_ENDPOINT) ? env.OS_ENDPOINT : undefined;
  const type = (env.OS_AUTH_TYPE ?? '').toLowerCase();
  const needEndpoint = (how: string) => {
    if (!given) throw new AuthError(`${how} needs the ${req.service} endpoint (its flag, or OS_ENDPOINT)`);
    return trim(given);
  };
  if (set(req.token)) return { endpoint: needEndpoint('a token'), headers: { 'x-auth-token': req.token }, describe: 'a given token' };
  if (type === 'admin_token' || type === 'token_endpoint') {
    if (!set(env.OS_TOKEN)) throw new AuthError(`OS_AUTH_TYPE=${type} needs OS_TOKEN`);
    return { endpoint: needEndpoint(`OS_AUTH_TYPE=${type}`), headers: { 'x-auth-token': env.OS_TOKEN }, describe: `OS_AUTH_TYPE=${type}` };
  }
  if (type === 'none' || type === 'noauth' || (type === '' && !set(env.OS_AUTH_URL))) {
    return { endpoint: needEndpoint('no authentication'), headers: {}, describe: 'no authentication' };
  }
  if (type !== '' && type !== 'password' && type !== 'v3password') {
    throw new AuthError(`OS_AUTH_TYPE=${type} is not supported here (none, admin_token, token_endpoint, password, v3password)`);
  }
  if (!set(env.OS_AUTH_URL)) throw new AuthError('Keystone password authentication needs OS_AUTH_URL');
  const base = keystoneV3(env.OS_AUTH_URL);
  const r = await doFetch(`${base}/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(passwordAuthBody(env)),
  });
  const text = await r.text();
  if (r.status !== 201) throw new AuthError(`Keystone at ${base} refused the password authentication: ${r.status} ${text.slice(0, 300)}`);
  const token = r.headers.get('x-subject-token');
  if (!token) throw new AuthError(`Keystone at ${base} answered 201 without X-Subject-Token`);
  const body = JSON.parse(text) as { token?: { catalog?: CatalogEntry[] } };
  const endpoint = given
    ? trim(given)
    : catalogEndpoint(body.token?.catalog, req.service, env.OS_INTERFACE || 'public', env.OS_REGION_NAME || undefined);
  return { endpoint, headers: { 'x-auth-token': token }, describe: `Keystone password (${base})` };
}
