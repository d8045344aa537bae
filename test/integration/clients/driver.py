"""Runs an OpenStack command-line client's own entry point repeatedly in one interpreter.

`/usr/bin/openstack` is `sys.exit(openstackclient.shell.main())` and `/usr/bin/baremetal`
is `sys.exit(ironicclient.shell.main())`; this calls the same `main(argv)` once per
request, so the clients run unmodified but pay their ~1-2 s of imports and plugin
discovery once instead of once per command. Protocol: one JSON line in ({"argv": [...]}),
one JSON line out ({"code", "stdout", "stderr"}).
usage: python3 driver.py openstackclient.shell:main
"""
import contextlib
import importlib
import io
import json
import logging
import sys
import traceback

module, func = sys.argv[1].split(':')
main = getattr(importlib.import_module(module), func)
reply = sys.stdout

for line in sys.stdin:
    argv = json.loads(line)['argv']
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
            code = rc if isinstance(rc, int) else 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:  # a crash of the client is reported, not fatal to the driver
            traceback.print_exc()
            code = 1
    # the clients configure logging per run (handlers bound to this run's stderr)
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    reply.write(json.dumps({'code': code, 'stdout': out.getvalue(), 'stderr': err.getvalue()}) + '\n')
    reply.flush()
