#!/usr/bin/env bash
# Debian packages that tests drive for real, installed when missing:
#   chromium + chromium-driver  the approval inbox's browser tests (tests/durable_surfaces/,
#                               through selenium from the dev extra)
#   postgresql                  the PostgreSQL journal store's tests (tests/durable/)
#
# Idempotent: a package whose command is already there is not asked for.
# Environment:
#   TOOLSCRIPT_SKIP_APT=1       never run apt-get (fail if packages are missing)
set -euo pipefail

say() { printf 'install-test-packages: %s\n' "$*" >&2; }
die() {
    say "ERROR: $*"
    exit 1
}

have_postgres() { compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; }

need_pkgs=()
command -v chromium >/dev/null 2>&1 || need_pkgs+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need_pkgs+=(chromium-driver)
have_postgres || need_pkgs+=(postgresql)
if [ ${#need_pkgs[@]} -eq 0 ]; then
    say "chromium, chromium-driver and postgresql already installed; nothing to do."
    exit 0
fi
[ "${TOOLSCRIPT_SKIP_APT:-0}" = 1 ] && die "missing packages: ${need_pkgs[*]} (TOOLSCRIPT_SKIP_APT=1)"
command -v apt-get >/dev/null 2>&1 || die "no apt-get: install ${need_pkgs[*]} by hand, then re-run."
[ "$(id -u)" = 0 ] || die "installing ${need_pkgs[*]} needs root (try: sudo bash $0)."
say "installing ${need_pkgs[*]} from Debian's packages ..."
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2 || die "apt-get update failed"
apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >&2 \
    || die "apt-get install ${need_pkgs[*]} failed"
command -v chromium >/dev/null 2>&1 || die "chromium not found after installing it"
command -v chromedriver >/dev/null 2>&1 || die "chromedriver not found after installing chromium-driver"
have_postgres || die "postgres not found after installing postgresql"
