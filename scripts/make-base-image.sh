#!/usr/bin/env bash
# Build a minimal Debian bookworm base image offline (no container registry
# needed): debootstrap a minbase root with python3 + python3-venv from the
# machine's own Debian mirror, strip it, and `docker import` it.
#
# Usage: bash scripts/make-base-image.sh [IMAGE]   (default toolscript-base:bookworm)
# Does nothing when IMAGE already exists (set TOOLSCRIPT_REBUILD_BASE=1 to force).
#
# The mirror is read from the apt sources configured on this machine
# (/etc/apt/sources.list.d/*.sources, then /etc/apt/sources.list); override it
# with TOOLSCRIPT_DEBIAN_MIRROR=URL. Where there is no registry, this is the
# base for `toolscript image build --base-image toolscript-base:bookworm`.
set -euo pipefail

IMAGE=${1:-toolscript-base:bookworm}
SUITE=${TOOLSCRIPT_DEBIAN_SUITE:-bookworm}

say() { printf 'make-base-image: %s\n' "$*" >&2; }
die() {
    say "ERROR: $*"
    exit 1
}

if [ "${TOOLSCRIPT_REBUILD_BASE:-0}" != 1 ] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
    say "$IMAGE already exists; nothing to do."
    exit 0
fi
command -v debootstrap >/dev/null 2>&1 || die "debootstrap not found (bash scripts/install-docker.sh installs it)."
[ "$(id -u)" = 0 ] || die "debootstrap needs root."

# ------------------------------------------------------------ find the mirror
# The first Debian (not -security) URI among the configured apt sources.
find_mirror() {
    local f uri
    shopt -s nullglob
    for f in /etc/apt/sources.list.d/*.sources; do
        # deb822: a stanza's "URIs:" line; skip security archives.
        while read -r uri; do
            case "$uri" in *security*) continue ;; esac
            case "$uri" in */debian | */debian/) echo "$uri"; return 0 ;; esac
        done < <(awk 'tolower($1)=="uris:" {for (i=2;i<=NF;i++) print $i}' "$f")
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        while read -r uri; do
            case "$uri" in *security*) continue ;; esac
            case "$uri" in */debian | */debian/) echo "$uri"; return 0 ;; esac
        done < <(awk '$1=="deb" {for (i=2;i<=NF;i++) if ($i ~ /^[a-z+]+:\/\//) {print $i; break}}' "$f")
    done
    return 1
}
MIRROR=${TOOLSCRIPT_DEBIAN_MIRROR:-$(find_mirror || true)}
[ -n "$MIRROR" ] || die "no Debian mirror found in /etc/apt/sources*; set TOOLSCRIPT_DEBIAN_MIRROR=URL."

WORK=$(mktemp -d /var/tmp/toolscript-base.XXXXXX)
ROOTFS="$WORK/rootfs"
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT

start=$SECONDS
say "debootstrap $SUITE from $MIRROR ..."
debootstrap --variant=minbase --include=python3,python3-venv \
    "$SUITE" "$ROOTFS" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 || {
    tail -n 30 "$WORK/debootstrap.log" >&2
    die "debootstrap failed"
}
say "debootstrap done in $((SECONDS - start))s; stripping ..."

# Keep the image small: no package caches, lists, docs, man pages, locales.
rm -rf "$ROOTFS"/var/cache/apt/* "$ROOTFS"/var/lib/apt/lists/* \
    "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/* \
    "$ROOTFS"/usr/share/locale/* "$ROOTFS"/usr/share/lintian "$ROOTFS"/var/log/* \
    "$ROOTFS"/debootstrap "$ROOTFS"/tmp/* "$ROOTFS"/var/tmp/*
# Keep Debian's precompiled .pyc files: the sandbox's root is read-only, so a
# missing .pyc would be recompiled on every container start. ensurepip's
# bundled wheels stay too: python3-venv needs them to make a venv.

say "importing as $IMAGE ..."
tar -C "$ROOTFS" -c . | docker import \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["/usr/bin/python3"]' \
    --message "toolscript base: debootstrap --variant=minbase $SUITE + python3, python3-venv" \
    - "$IMAGE" >/dev/null
size=$(docker image inspect -f '{{.Size}}' "$IMAGE")
say "made $IMAGE ($((size / 1024 / 1024)) MB) in $((SECONDS - start))s."
