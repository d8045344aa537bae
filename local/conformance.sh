#!/usr/bin/env bash
# `npm run conformance [-- --only FILE.yaml ...]`: Placement's gabbi suite (the visible
# files in ../shared/conformance/gabbits) against a fresh local Berth per file.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${BERTH_SHARED:-$ROOT/../shared}
exec /usr/bin/python3 "$SHARED/conformance/run" \
  --server-cmd "cd $ROOT && exec node_modules/.bin/tsx local/start.ts --fresh --placement-port {port} --baremetal-port 0 --no-dashboard --maintenance-interval 0" \
  --gabbits "$SHARED/conformance/gabbits" --jobs "${CONFORMANCE_JOBS:-2}" "$@"
