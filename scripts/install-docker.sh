#!/usr/bin/env bash
# Make sure a Docker engine answers `docker info`, installing and starting one
# if needed.
#
# Idempotent and safe to re-run: when `docker info` already works (a running
# local dockerd, or a remote engine reached through DOCKER_HOST) it does
# nothing. Otherwise, as root on a Debian machine without systemd, it installs
# Debian's `docker.io` (plus `debootstrap`, used by make-base-image.sh), starts
# `dockerd` in the background with its log in $TOOLSCRIPT_DOCKERD_LOG, and waits
# (bounded) until the engine answers.
#
# Storage driver: overlay2 is tried first; vfs is only a fallback when overlay2
# does not work (slow and disk-hungry, but it works everywhere).
#
# Environment:
#   TOOLSCRIPT_DOCKERD_LOG      dockerd log file     (default /var/log/toolscript-dockerd.log)
#   TOOLSCRIPT_DOCKER_WAIT      seconds to wait      (default 60)
#   TOOLSCRIPT_SKIP_APT=1       never run apt-get (fail if packages are missing)
set -euo pipefail

LOG=${TOOLSCRIPT_DOCKERD_LOG:-/var/log/toolscript-dockerd.log}
WAIT=${TOOLSCRIPT_DOCKER_WAIT:-60}

say() { printf 'install-docker: %s\n' "$*" >&2; }
die() {
    say "ERROR: $*"
    exit 1
}

engine_up() { timeout 10 docker info >/dev/null 2>&1; }

if command -v docker >/dev/null 2>&1 && engine_up; then
    say "Docker engine already answers; nothing to do."
    exit 0
fi

if [ -n "${DOCKER_HOST:-}" ]; then
    die "DOCKER_HOST=$DOCKER_HOST is set but that engine does not answer 'docker info'.
  Start that engine, or unset DOCKER_HOST to install and start a local one."
fi

[ "$(id -u)" = 0 ] || die "a local Docker engine must be installed and started as root (try: sudo bash $0)."

# ---------------------------------------------------------------- packages
need_pkgs=()
command -v dockerd >/dev/null 2>&1 || need_pkgs+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need_pkgs+=(debootstrap)
if [ ${#need_pkgs[@]} -gt 0 ]; then
    [ "${TOOLSCRIPT_SKIP_APT:-0}" = 1 ] && die "missing packages: ${need_pkgs[*]} (TOOLSCRIPT_SKIP_APT=1)"
    command -v apt-get >/dev/null 2>&1 || die "no apt-get: install a Docker engine by hand, then re-run."
    say "installing ${need_pkgs[*]} from Debian's packages ..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 || die "apt-get update failed"
    # --no-install-recommends keeps it small; docker.io's runtime deps
    # (containerd, runc, iptables, tini) are real Depends and still come.
    apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >&2 \
        || die "apt-get install ${need_pkgs[*]} failed"
fi
command -v dockerd >/dev/null 2>&1 || die "dockerd not found after installing docker.io"
command -v docker >/dev/null 2>&1 || die "docker CLI not found after installing docker.io"

# ---------------------------------------------------------------- dockerd
wait_engine() { # $1 = pid of the dockerd we started
    local deadline=$((SECONDS + WAIT))
    while [ $SECONDS -lt $deadline ]; do
        engine_up && return 0
        kill -0 "$1" 2>/dev/null || return 1
        sleep 0.5
    done
    return 1
}

start_dockerd() { # $1 = storage driver
    say "starting dockerd (storage driver $1, log $LOG) ..."
    mkdir -p "$(dirname "$LOG")"
    # setsid + nohup: dockerd must outlive this script and its caller's
    # process group (CI ends what a step leaves running only at the end).
    setsid nohup dockerd --storage-driver="$1" >>"$LOG" 2>&1 </dev/null &
    DOCKERD_PID=$!
    if wait_engine "$DOCKERD_PID"; then
        say "dockerd is up (pid $DOCKERD_PID, storage driver $1)."
        return 0
    fi
    kill "$DOCKERD_PID" 2>/dev/null || true
    for _ in $(seq 1 20); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.5; done
    return 1
}

if pid=$(pgrep -x dockerd | head -n1) && [ -n "$pid" ]; then
    say "dockerd (pid $pid) runs but does not answer yet; waiting up to ${WAIT}s ..."
    wait_engine "$pid" && { say "dockerd is up."; exit 0; }
    die "dockerd (pid $pid) runs but 'docker info' does not answer; see $LOG"
fi

# A stale pid file from a dockerd/containerd killed hard blocks a new start.
rm -f /var/run/docker.pid /run/docker.pid /var/run/docker/containerd/containerd.pid 2>/dev/null || true

if start_dockerd overlay2; then exit 0; fi
say "dockerd did not come up with overlay2; last log lines:"
tail -n 15 "$LOG" >&2 || true
if start_dockerd vfs; then
    say "WARNING: running with the slow vfs storage driver."
    exit 0
fi
say "last dockerd log lines:"
tail -n 30 "$LOG" >&2 || true
die "dockerd did not answer within ${WAIT}s; full log in $LOG"
