"""What the drivers of Nova's own Placement client share (nova_report.py,
nova_continue.py): Nova set up as its services set it up (eventlet, config, objects),
a SchedulerReportClient's adapter on a fixed endpoint with a fixed token, and the
resource tracker's periodic update.

Authentication: keystoneauth's token_endpoint plugin (a fixed token, `admin`: the
admin of Placement's noauth2, and of Berth locally) on an Adapter with
endpoint_override - what [placement] auth_type=admin_token + endpoint_override give.
Nova runs under eventlet; so does this (its ProviderTree copies need green locks).
"""
import nova.monkey_patch  # noqa: F401  (eventlet, as every nova service)

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint

import nova.conf
from nova import context as nova_context
from nova import exception
from nova import objects

nova.conf.CONF([], project='nova')
objects.register_all()

from nova.scheduler.client import report  # noqa: E402

ctx = nova_context.get_admin_context()


def adapter(endpoint):
    """the Adapter nova.utils.get_ksa_adapter builds (raise_exc=False: the client reads
    status codes), on `endpoint`"""
    session = ks_session.Session(auth=token_endpoint.Token(endpoint, 'admin'))
    return ks_adapter.Adapter(session, service_type='placement', endpoint_override=endpoint, raise_exc=False)


def inv(total, ratio=1.0, reserved=0, max_unit=None, **kw):
    return dict(total=total, reserved=reserved, min_unit=1, max_unit=max_unit or total,
                step_size=1, allocation_ratio=ratio, **kw)


def outcome(fn, *a, **kw):
    """the call's result, or the Nova exception it raised (by class name)"""
    try:
        return {'returned': fn(*a, **kw)}
    except (exception.NovaException, report.Retry) as e:
        return {'raised': type(e).__name__}


def compute_update(client_, root, name, change, reshape_allocations=None):
    """one periodic update of a compute node, as the resource tracker makes it: a fresh
    copy of the cached tree, the virt driver's changes, then update_from_provider_tree
    (a reshape when the driver moves inventory that has allocations:
    reshape_allocations(allocations of the tree) -> the allocations after it). A
    generation conflict (claims bump provider generations behind the cache's back)
    clears the cache and the whole update is redone, up to 4 times, as
    ResourceTracker._update_to_placement's retry does."""
    for attempt in range(4):
        tree = client_.get_provider_tree_and_ensure_root(ctx, root, name=name)
        change(tree)
        allocs = None
        if reshape_allocations:
            allocs = reshape_allocations(client_.get_allocations_for_provider_tree(ctx, name))
        result = outcome(client_.update_from_provider_tree, ctx, tree, allocations=allocs)
        if result.get('raised') not in ('ResourceProviderUpdateConflict', 'PlacementReshapeConflict'):
            return dict(result, attempts=attempt + 1)
    return dict(result, attempts=4)


def api(client, path, version='1.39'):
    """a GET through the client's adapter: (status, body)"""
    r = client.get(path, microversion=version)
    return r.status_code, (r.json() if r.text else None)


def tree_state(client, root):
    """What Placement holds for a tree, through the API: providers in its order, each
    one's inventories (with their Python number types), traits and aggregates."""
    _, body = api(client, '/resource_providers?in_tree=%s' % root)
    out = []
    for p in body['resource_providers']:
        u = p['uuid']
        invs = api(client, '/resource_providers/%s/inventories' % u)[1]['inventories']
        out.append({
            'provider': u, 'name': p['name'], 'parent': p['parent_provider_uuid'],
            'generation': p['generation'],
            # by class: upstream lists a provider's inventories in row insertion
            # order, the classes one PUT adds in hash-seed order (Berth: class order)
            'inventories': sorted([rc, sorted(i.items())] for rc, i in invs.items()),
            'traits': sorted(api(client, '/resource_providers/%s/traits' % u)[1]['traits']),
            'aggregates': sorted(api(client, '/resource_providers/%s/aggregates' % u)[1]['aggregates']),
        })
    return out


def allocations(client, consumer):
    """GET /allocations/{consumer} as the API answers it (providers in its order)"""
    return api(client, '/allocations/%s' % consumer)[1]
