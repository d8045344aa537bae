import { describe, expect, it } from 'vitest';
import { PlacementError } from '../../../functions/core/placement/errors.js';
import { errorContentType, renderError } from '../../../functions/placement/framework/errors.js';
import { acceptableOffers } from '../../../functions/http/accept.js';

describe('error rendering (WebOb + Placement json_error_formatter)', () => {
  it('renders the JSON envelope with the WebOb detail template', () => {
    const r = renderError(new PlacementError(404), { method: 'GET', requestId: 'req-1' });
    expect(JSON.parse(r.body!)).toEqual({
      errors: [{ status: 404, title: 'Not Found', detail: 'The resource could not be found.\n\n   ', request_id: 'req-1' }],
    });
  });
  it('adds the error code from 1.23 and version bounds to a 406 before versioning', () => {
    const r = renderError(new PlacementError(409, 'x', 'placement.concurrent_update'), {
      method: 'PUT',
      requestId: 'r',
      version: { major: 1, minor: 23 },
    });
    expect(JSON.parse(r.body!).errors[0].code).toBe('placement.concurrent_update');
    const r2 = renderError(new PlacementError(406, 'Invalid microversion: Unacceptable version header: 0.5'), { method: 'GET', requestId: 'r' });
    expect(JSON.parse(r2.body!).errors[0]).toMatchObject({ max_version: '1.39', min_version: '1.0' });
  });
  it('uses the 405 and 415 templates', () => {
    const r = renderError(new PlacementError(405, 'The method specified is not allowed for this resource.'), { method: 'DELETE', requestId: 'r' });
    expect(JSON.parse(r.body!).errors[0].detail).toBe(
      'The method DELETE is not allowed for this resource. \n\n The method specified is not allowed for this resource.',
    );
    const r2 = renderError(new PlacementError(415, 'The media type None is not supported, use application/json'), { method: 'PUT', requestId: 'r' });
    expect(JSON.parse(r2.body!).errors[0].detail).toContain('The request media type None is not supported by this server.');
  });
  it('negotiates like WebOb, JSON for a missing or */* Accept', () => {
    expect(errorContentType(undefined)).toBe('application/json');
    expect(errorContentType('*/*')).toBe('application/json');
    expect(errorContentType('text/html')).toBe('text/html');
    expect(errorContentType('application/json, text/html')).toBe('text/html');
    expect(errorContentType('text/plain')).toBe('text/plain');
    expect(errorContentType('text/html;q=0.5, */*')).toBe('application/json');
    const html = renderError(new PlacementError(406, 'x'), { method: 'GET', requestId: 'r', accept: 'text/html' });
    expect(html.headers['content-type']).toBe('text/html; charset=UTF-8');
  });
  it('matches Accept specificity', () => {
    expect(acceptableOffers('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', ['application/json'])).toEqual(['application/json']);
    expect(acceptableOffers('text/html,application/xml;q=0.9', ['application/json'])).toEqual([]);
  });
});
