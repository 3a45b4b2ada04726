# The toolscript sandbox image: a Python interpreter, RestrictedPython and the
# `toolscript.sandbox` package. Nothing from runtime/ or tools/, no compilers,
# no pip, no shell or other programs, no setuid files, no network access
# during the build. One flat layer.
#
# Usually built by `toolscript image build [--base-image IMAGE]`, which
# assembles the build context in a temporary folder. From a checkout:
#
#   bash scripts/make-wheelhouse.sh            # ./wheelhouse (RestrictedPython wheel)
#   docker build --build-arg PROTOCOL_VERSION=1 -t toolscript-sandbox:latest .
#
# Build context: Dockerfile, sandbox/ (package source), wheelhouse/ (wheels).
# Where no registry is reachable, use an offline base made by
# scripts/make-base-image.sh: --build-arg BASE_IMAGE=toolscript-base:bookworm.
ARG BASE_IMAGE=python:3.12-slim
FROM ${BASE_IMAGE} AS build
# Marks this stage's (untagged) image so builds can prune older ones.
LABEL org.toolscript.build-stage=1

# Python packages come from the host-side wheelhouse only (--no-index): TLS
# from inside the build container may not work, air-gapped builds need it.
COPY wheelhouse/ /tmp/wheelhouse/
RUN set -eu; \
    python3 -m venv /opt/toolscript/venv; \
    /opt/toolscript/venv/bin/python -m pip install -q --no-index --find-links /tmp/wheelhouse \
        --no-compile --disable-pip-version-check --no-cache-dir /tmp/wheelhouse/*.whl; \
    /opt/toolscript/venv/bin/python -m pip uninstall -q -y pip setuptools 2>/dev/null || true; \
    rm -rf /tmp/wheelhouse /opt/toolscript/venv/bin/pip* /opt/toolscript/venv/bin/activate* \
        /opt/toolscript/venv/bin/Activate.ps1; \
    find / -xdev -type f -perm /6000 -exec chmod a-s {} + ; \
    echo 'sandbox:x:10001:10001:toolscript sandbox:/nonexistent:/usr/sbin/nologin' >> /etc/passwd; \
    echo 'sandbox:x:10001:' >> /etc/group

# The sandbox package as `toolscript.sandbox`, under an empty `toolscript`
# package (the real toolscript/__init__ imports host code). The venv's
# site-packages path depends on the Python version, so ask the interpreter.
# Everything is precompiled: the root is read-only at run time.
COPY sandbox/ /tmp/toolscript-src/sandbox/
RUN set -eu; \
    py=/opt/toolscript/venv/bin/python; \
    site=$("$py" -c 'import sysconfig; print(sysconfig.get_path("purelib"))'); \
    stdlib=$("$py" -c 'import sysconfig; print(sysconfig.get_path("stdlib"))'); \
    mkdir -p "$site/toolscript"; \
    : > "$site/toolscript/__init__.py"; \
    cp -R /tmp/toolscript-src/sandbox "$site/toolscript/sandbox"; \
    rm -rf /tmp/toolscript-src; \
    find "$site/toolscript" -name __pycache__ -prune -exec rm -rf {} +; \
    "$py" -m compileall -q -j 0 "$stdlib" "$site" >/dev/null || true; \
    "$py" -I -c 'import toolscript.sandbox.server, RestrictedPython'

# Strip: only the interpreter stays in the bin folders (no shell, coreutils,
# package managers); package databases, docs and perl go too. `find` runs
# last, deleting the shell that runs this step and itself.
RUN set -eu; \
    dirs=; \
    for d in /bin /sbin /usr/bin /usr/sbin /usr/local/bin /usr/local/sbin; do \
        if [ -d "$d" ] && [ ! -L "$d" ]; then dirs="$dirs $d"; fi; \
    done; \
    rm -rf /var/lib/dpkg /var/lib/apt /var/cache/* /var/log/* /etc/apt /usr/lib/apt \
        /usr/share/doc /usr/share/man /usr/share/info /usr/share/perl* /usr/lib/*/perl* \
        /usr/local/lib/python3*/ensurepip /usr/lib/python3*/ensurepip; \
    find $dirs -mindepth 1 -maxdepth 1 ! -name 'python*' -exec rm -rf {} +

# One flat layer: what the steps above deleted is really gone.
FROM scratch
COPY --from=build / /
ARG PROTOCOL_VERSION
ARG SOURCE_DIGEST=unknown
LABEL org.toolscript.protocol="${PROTOCOL_VERSION}" \
      org.toolscript.source-digest="${SOURCE_DIGEST}"
ENV LANG=C.UTF-8
USER 10001:10001
WORKDIR /tmp
ENTRYPOINT ["/opt/toolscript/venv/bin/python", "-I", "-m", "toolscript.sandbox"]
CMD []
