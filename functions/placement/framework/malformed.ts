/** Placement's answer to an HTTP request too malformed to reach a handler. */
import { randomUUID } from 'node:crypto';
import { PlacementError } from '../../core/placement/errors.js';
import { renderError } from './errors.js';

export function placementMalformed(code: string) {
  const detail = code === 'HPE_INVALID_CONTENT_LENGTH' ? 'content-length header must be an integer' : 'malformed HTTP request';
  const id = `req-${randomUUID()}`;
  const r = renderError(new PlacementError(400, detail), { method: 'GET', requestId: id });
  return { status: r.status, headers: { ...r.headers, 'x-openstack-request-id': id, 'openstack-request-id': id }, body: r.body ?? '' };
}
