/**
 * Validates X-Auth-Token values against Keystone (GET /v3/auth/tokens with the service's
 * own token), with an in-process cache bounded by each token's expiry. The service
 * token itself is obtained with the configured service user and refreshed before expiry.
 */
import { identityFromKeystone, type KeystoneToken } from '../core/policy/identity.js';
import type { Identity } from '../core/policy/identity.js';

export interface KeystoneConfig {
  url: string; // e.g. https://keystone.example.com/v3 or http://127.0.0.1:5000
  username: string;
  password: string;
  userDomain: string;
  project: string;
  projectDomain: string;
  /** upper bound for caching one validation (seconds; 0: no cache) — a revoked token keeps working this long */
  cacheTtlS: number;
  timeoutMs: number;
}

/** how long an invalid token's answer is kept at most (s) */
export const NEGATIVE_TTL_S = 5;

interface Cached {
  identity: Identity | undefined;
  until: number;
}

function v3(url: string): string {
  const u = url.replace(/\/+$/, '');
  return u.endsWith('/v3') ? u : `${u}/v3`;
}

export class KeystoneValidator {
  private serviceToken: { value: string; until: number } | undefined;
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly cfg: KeystoneConfig,
    private readonly fetchFn: typeof fetch = fetch,
  ) {}

  private async request(path: string, init: RequestInit): Promise<Response> {
    const ctl = new AbortController();
    const t = setTimeout(() => ctl.abort(), this.cfg.timeoutMs);
    try {
      return await this.fetchFn(`${v3(this.cfg.url)}${path}`, { ...init, signal: ctl.signal });
    } finally {
      clearTimeout(t);
    }
  }

  private async service(): Promise<string> {
    if (this.serviceToken && this.serviceToken.until > Date.now() + 30_000) return this.serviceToken.value;
    const r = await this.request('/auth/tokens', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['password'],
            password: { user: { name: this.cfg.username, domain: { name: this.cfg.userDomain }, password: this.cfg.password } },
          },
          scope: { project: { name: this.cfg.project, domain: { name: this.cfg.projectDomain } } },
        },
      }),
    });
    if (r.status !== 201) throw new Error(`keystone service authentication failed: HTTP ${r.status}`);
    const value = r.headers.get('x-subject-token');
    const body = (await r.json()) as KeystoneToken;
    if (!value) throw new Error('keystone returned no service token');
    this.serviceToken = { value, until: Date.parse(body.token.expires_at ?? '') || Date.now() + 600_000 };
    return value;
  }

  /** The identity of a valid token, undefined for an invalid or expired one. */
  async validate(token: string): Promise<Identity | undefined> {
    const now = Date.now();
    const hit = this.cache.get(token);
    if (hit && hit.until > now) return hit.identity;
    let service = await this.service();
    let r = await this.request('/auth/tokens', { headers: { 'x-auth-token': service, 'x-subject-token': token } });
    if (r.status === 401) {
      // our own token may have been revoked: get a new one once
      this.serviceToken = undefined;
      service = await this.service();
      r = await this.request('/auth/tokens', { headers: { 'x-auth-token': service, 'x-subject-token': token } });
    }
    let identity: Identity | undefined;
    // negative answers (an invalid token): a short cache
    let until = now + Math.min(this.cfg.cacheTtlS, NEGATIVE_TTL_S) * 1000;
    if (r.status === 200) {
      const body = (await r.json()) as KeystoneToken;
      identity = identityFromKeystone(body);
      const exp = Date.parse(body.token.expires_at ?? '');
      until = Math.min(now + this.cfg.cacheTtlS * 1000, Number.isNaN(exp) ? now : exp);
    } else if (r.status !== 404 && r.status !== 401) {
      throw new Error(`keystone token validation failed: HTTP ${r.status}`);
    }
    if (until <= now) return identity;
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(token, { identity, until });
    return identity;
  }
}
