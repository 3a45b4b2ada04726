#!/usr/bin/env bash
# Everything the docker tests need before pytest, on a fresh machine as root:
#   1. a running Docker engine         (scripts/install-docker.sh; no-op if one answers)
#   2. the offline base image          (scripts/make-base-image.sh; no-op if present)
#   3. the sandbox image built from the sandbox/ sources of this checkout
#      (cheap when nothing changed: Docker's layer cache)
#   4. Debian packages other tests drive for real: chromium + chromium-driver,
#      postgresql               (scripts/install-test-packages.sh; no-op if present)
# Python dependencies (`pip install -e '.[dev]'`) are installed before this.
#
# Environment:
#   TOOLSCRIPT_IMAGE        sandbox image tag  (default toolscript-sandbox:latest)
#   TOOLSCRIPT_BASE_IMAGE   base image         (default toolscript-base:bookworm,
#                           made offline; set python:3.12-slim where a registry works)
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=${TOOLSCRIPT_IMAGE:-toolscript-sandbox:latest}
BASE=${TOOLSCRIPT_BASE_IMAGE:-toolscript-base:bookworm}
PY=${PYTHON:-python3}
t0=$SECONDS

bash scripts/install-docker.sh
t1=$SECONDS
if [ "$BASE" = toolscript-base:bookworm ]; then
    bash scripts/make-base-image.sh "$BASE"
fi
t2=$SECONDS
"$PY" -m toolscript.runtime.cli.image build --base-image "$BASE" --tag "$IMAGE" --quiet >/dev/null
t3=$SECONDS
"$PY" -m toolscript.runtime.cli.image status --tag "$IMAGE"
bash scripts/install-test-packages.sh
t4=$SECONDS
echo "test-setup: engine $((t1 - t0))s, base image $((t2 - t1))s, sandbox image $((t3 - t2))s," \
    "test packages $((t4 - t3))s" >&2
