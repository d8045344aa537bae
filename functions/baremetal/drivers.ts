/**
 * /v1/drivers, /v1/drivers/{driver} and /v1/drivers/{driver}/properties
 * (DriversController): the enabled hardware types (functions/conductor/driver.ts), each
 * served by Berth's one conductor name. Static: no table access.
 */
import { httpLambda } from '../http/apigw.js';
import { Err } from '../core/baremetal/errors.js';
import { INTERFACES } from '../core/baremetal/records.js';
import { driverFor, enabledDrivers, type HardwareDriver } from '../conductor/driver.js';
import { baremetalApp, jsonResponse, makeLink, queryArgs, selfLinks, type BmRequest, type FamilyRoutes } from './framework/app.js';
import { booleanArg, stringArg, stringListArg } from './framework/args.js';
import { V } from './framework/versions.js';
import { conductorName } from './views.js';

const AT_1_30 = 'Request not acceptable. The minimal required API version should be 1.30';

/** interfaces a version does not know yet (hide_fields_in_newer_versions) */
function hiddenInterfaces(minor: number): string[] {
  return [
    ...(minor < V.STORAGE_INTERFACE ? ['storage'] : []),
    ...(minor < V.RESCUE_INTERFACE ? ['rescue'] : []),
    ...(minor < V.BIOS_INTERFACE ? ['bios'] : []),
  ];
}

/** driver.convert_with_links (+ driver_sanitize with fields=) */
function driverView(r: BmRequest, d: HardwareDriver, detail: boolean, fields?: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { name: d.name, hosts: [conductorName()], links: selfLinks(r, 'drivers', d.name) };
  if (r.minor >= V.LINKS_NODESTATES) {
    out.properties = [makeLink(r, 'self', 'drivers', `${d.name}/properties`), makeLink(r, 'bookmark', 'drivers', `${d.name}/properties`, true)];
  }
  if (r.minor >= V.DYNAMIC_DRIVERS) {
    out.type = 'dynamic';
    if (detail) {
      const hidden = hiddenInterfaces(r.minor);
      for (const iface of INTERFACES) {
        if (hidden.includes(iface)) continue;
        out[`default_${iface}_interface`] = d.defaults[iface];
        out[`enabled_${iface}_interfaces`] = [...d.enabled[iface]];
      }
    }
  }
  if (fields) {
    for (const k of Object.keys(out)) if (!fields.includes(k) && k !== 'links') delete out[k];
    const invalid = fields.filter((f) => !(f in out));
    if (invalid.length) throw Err.invalid(`Field(s) "${invalid.join(', ')}" are not valid`);
  }
  return out;
}

async function list(r: BmRequest) {
  const q = queryArgs(r, ['type', 'detail', 'fields']);
  const type = stringArg('type', q.type);
  const detail = booleanArg('detail', q.detail);
  const fields = stringListArg('fields', q.fields);
  if (fields?.length && detail) throw Err.invalid('Can not specify ?detail=True and fields in the same request.');
  r.authorize('baremetal:driver:get');
  if ((detail !== undefined || type !== undefined) && r.minor < V.DYNAMIC_DRIVERS) throw Err.notAcceptable(AT_1_30);
  if (fields !== undefined && r.minor < V.DRIVER_FIELDS) throw Err.notAcceptable();
  if (type !== undefined && type !== 'classic' && type !== 'dynamic') {
    throw Err.invalid('"type" filter must be one of "classic" or "dynamic", if specified.');
  }
  // every hardware type is dynamic: there are no classic drivers
  const drivers = type === 'classic' ? [] : enabledDrivers().map((n) => driverFor(n)!);
  return jsonResponse(200, { drivers: drivers.map((d) => driverView(r, d, detail === true, fields)) });
}

async function show(r: BmRequest) {
  const name = stringArg('driver_name', r.params.driver)!;
  const fields = stringListArg('fields', queryArgs(r, ['fields']).fields);
  r.authorize('baremetal:driver:get');
  if (fields !== undefined && r.minor < V.DRIVER_FIELDS) throw Err.notAcceptable();
  const d = driverFor(name);
  if (!d) throw Err.driverNotFound(name);
  return jsonResponse(200, driverView(r, d, true, fields));
}

async function properties(r: BmRequest) {
  const name = stringArg('driver_name', r.params.driver)!;
  queryArgs(r, []);
  r.authorize('baremetal:driver:get_properties');
  const d = driverFor(name);
  if (!d) throw Err.driverUnknown(name);
  return jsonResponse(200, d.properties);
}

export const routes: FamilyRoutes = {
  '/v1/drivers': { GET: list },
  '/v1/drivers/{driver}': { GET: show },
  '/v1/drivers/{driver}/properties': { GET: properties },
};
export const handler = httpLambda(baremetalApp(routes), 'baremetal-drivers');
