"""The sandbox container image: connect to the engine, build, inspect, check.

The image holds a Python interpreter, RestrictedPython and the
``toolscript.sandbox`` package, nothing else (see the top-level ``Dockerfile``).
It is built from a temporary build context assembled on the host::

    Dockerfile      the top-level Dockerfile of this project
    sandbox/        the installed ``toolscript.sandbox`` package's source
    wheelhouse/     wheels of RestrictedPython, made on the host with pip

so the build itself never reaches the network (``pip install --no-index``):
that is what air-gapped deployments need, and on machines where TLS from
inside containers fails it is the only way that works.

Two labels tie an image to the code that talks to it:

* ``org.toolscript.protocol``: the wire protocol version; a mismatch is an
  :class:`~toolscript.errors.ImageError` (the host refuses to use the image);
* ``org.toolscript.source-digest``: a hash of the sandbox sources, the
  Dockerfile and the RestrictedPython version; a mismatch only means the image
  is stale (:func:`ensure_image` rebuilds it).

The engine is whatever the Docker SDK reaches from the environment
(``DOCKER_HOST``, ``DOCKER_TLS_VERIFY``, ``DOCKER_CERT_PATH``), e.g.
``DOCKER_HOST=ssh://me@buildbox`` or ``tcp://10.0.0.5:2376`` for a remote engine.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolscript.errors import BackendUnavailable, ImageError

if TYPE_CHECKING:
    import docker

__all__ = [
    "DEFAULT_BASE_IMAGE",
    "DEFAULT_IMAGE",
    "DIGEST_LABEL",
    "OFFLINE_BASE_IMAGE",
    "PROTOCOL_LABEL",
    "ImageStatus",
    "build_image",
    "build_wheelhouse",
    "check_image",
    "docker_client",
    "ensure_image",
    "expected_protocol",
    "image_status",
    "source_digest",
]

DEFAULT_IMAGE = "toolscript-sandbox:latest"
"""Tag of the sandbox image that the docker backend uses by default."""
DEFAULT_BASE_IMAGE = "python:3.12-slim"
"""Base image of ``toolscript image build`` (pulled from a registry)."""
OFFLINE_BASE_IMAGE = "toolscript-base:bookworm"
"""Base made offline by ``scripts/make-base-image.sh`` (debootstrap + docker import)."""
PROTOCOL_LABEL = "org.toolscript.protocol"
DIGEST_LABEL = "org.toolscript.source-digest"
STAGE_LABEL = "org.toolscript.build-stage"


_HOW_TO_FIX = (
    "Start the Docker daemon (e.g. `sudo systemctl start docker`, or `sudo dockerd &`), "
    "or point DOCKER_HOST at a running engine (e.g. DOCKER_HOST=unix:///run/docker.sock, "
    "tcp://HOST:2376 with DOCKER_TLS_VERIFY/DOCKER_CERT_PATH, or ssh://USER@HOST). "
    "On a Debian machine without Docker, as root: `bash scripts/install-docker.sh` "
    "from a toolscript checkout installs and starts one."
)


# --------------------------------------------------------------------- engine


def docker_client(timeout: float = 60.0) -> docker.DockerClient:
    """Return a Docker SDK client for the engine configured in the environment.

    Raises :class:`~toolscript.errors.BackendUnavailable`, with a message that
    says how to fix it, when the SDK is not installed or no engine answers.
    """
    try:
        import docker
        import docker.errors
    except ImportError as exc:
        raise BackendUnavailable(
            "the docker backend needs the Docker SDK for Python: pip install 'toolscript[docker]'"
        ) from exc
    where = os.environ.get("DOCKER_HOST") or "the default socket (unix:///var/run/docker.sock)"
    try:
        client = docker.from_env(timeout=int(timeout))
        client.ping()
    except docker.errors.DockerException as exc:
        raise BackendUnavailable(
            f"no Docker engine answers at {where}: {exc}. {_HOW_TO_FIX}"
        ) from exc
    except Exception as exc:  # requests/urllib3/paramiko errors surface as-is
        raise BackendUnavailable(
            f"no Docker engine answers at {where}: {type(exc).__name__}: {exc}. {_HOW_TO_FIX}"
        ) from exc
    return client


# ------------------------------------------------------------ build inputs


def expected_protocol() -> int:
    """The wire protocol version of the installed ``toolscript.sandbox``."""
    from toolscript.sandbox.protocol import PROTOCOL_VERSION

    return int(PROTOCOL_VERSION)


def _sandbox_dir() -> Path:
    spec = importlib.util.find_spec("toolscript.sandbox")
    if spec is None or not spec.submodule_search_locations:
        raise ImageError("cannot locate the toolscript.sandbox package to copy into the image")
    return Path(next(iter(spec.submodule_search_locations)))


def _sandbox_files(src: Path) -> list[Path]:
    return sorted(
        p
        for p in src.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in {".pyc", ".pyo"}
    )


def _dockerfile_text() -> str:
    # Shipped as package data; the top-level Dockerfile is a symlink to it.
    return (resources.files("toolscript.runtime") / "sandbox.Dockerfile").read_text("utf-8")


def _restrictedpython_version() -> str:
    try:
        return importlib.metadata.version("RestrictedPython")
    except importlib.metadata.PackageNotFoundError as exc:  # pragma: no cover - a dependency
        raise ImageError("RestrictedPython is not installed on the host") from exc


def source_digest(sandbox_dir: Path | None = None) -> str:
    """Hash of everything that goes into the image (sources, Dockerfile, versions).

    An image whose ``org.toolscript.source-digest`` label differs was built
    from other sources: it still works if its protocol matches, but is stale.
    """
    src = sandbox_dir or _sandbox_dir()
    h = hashlib.sha256()
    h.update(_dockerfile_text().encode())
    h.update(f"RestrictedPython=={_restrictedpython_version()}".encode())
    for p in _sandbox_files(src):
        h.update(str(p.relative_to(src)).encode() + b"\0")
        h.update(p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def build_wheelhouse(dest: Path) -> Path:
    """Put wheels of the sandbox's dependencies into ``dest`` using pip on the host.

    RestrictedPython is pinned to the version installed here, so the host and
    the sandbox agree on the restricted compiler's behaviour.
    """
    dest.mkdir(parents=True, exist_ok=True)
    req = f"RestrictedPython=={_restrictedpython_version()}"
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "-q",
        "--disable-pip-version-check",
        "-w",
        str(dest),
        req,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not any(dest.glob("*.whl")):
        raise ImageError(
            f"could not make a wheelhouse with {' '.join(cmd)}:\n{proc.stderr.strip()}\n"
            "Pass wheelhouse=DIR (or --wheelhouse DIR) with the wheels for offline builds."
        )
    return dest


# ------------------------------------------------------------------ status


@dataclass(frozen=True)
class ImageStatus:
    """What the engine knows about a sandbox image tag."""

    tag: str
    exists: bool
    image_id: str | None = None
    protocol: int | None = None
    source_digest: str | None = None
    size: int | None = None
    expected_protocol: int | None = None
    expected_digest: str | None = None
    python_env: tuple[str, ...] = ()
    """``PYTHON*`` variables of the image's environment that its interpreter would
    read: the sandbox starts without ``-E`` (so that it honours the hash seed the
    host sets), so such a variable (``PYTHONPATH``, ``PYTHONSTARTUP``...) is refused."""

    @property
    def compatible(self) -> bool:
        """The image exists and speaks the host's protocol version."""
        return self.exists and self.protocol == self.expected_protocol

    @property
    def up_to_date(self) -> bool:
        """Compatible and built from the sandbox sources installed on this host."""
        return self.compatible and self.source_digest == self.expected_digest


def image_status(
    tag: str = DEFAULT_IMAGE, *, client: docker.DockerClient | None = None
) -> ImageStatus:
    """Inspect ``tag`` on the engine (no exception if it is missing)."""
    import docker.errors

    client = client or docker_client()
    want_protocol = expected_protocol()
    want_digest = source_digest()
    try:
        image = client.images.get(tag)
    except docker.errors.ImageNotFound:
        return ImageStatus(tag, False, expected_protocol=want_protocol, expected_digest=want_digest)
    labels = image.labels or {}
    proto = labels.get(PROTOCOL_LABEL)
    return ImageStatus(
        tag=tag,
        exists=True,
        image_id=image.id,
        protocol=int(proto) if proto and proto.isdigit() else None,
        source_digest=labels.get(DIGEST_LABEL),
        size=image.attrs.get("Size"),
        expected_protocol=want_protocol,
        expected_digest=want_digest,
        python_env=python_variables((image.attrs.get("Config") or {}).get("Env") or []),
    )


_INERT_PYTHON_VARIABLES = frozenset({"PYTHONHASHSEED", "PYTHON_VERSION", "PYTHON_SHA256"})
"""Set by the host (the seed) or only informational (Docker's official python images)."""


def python_variables(env: list[str]) -> tuple[str, ...]:
    """The names in ``env`` (``NAME=value`` items) that CPython may read at start."""
    names = (str(item).partition("=")[0] for item in env)
    return tuple(sorted({n for n in names if n.startswith("PYTHON")} - _INERT_PYTHON_VARIABLES))


def check_image(
    tag: str = DEFAULT_IMAGE, *, client: docker.DockerClient | None = None
) -> ImageStatus:
    """Raise :class:`~toolscript.errors.ImageError` unless ``tag`` is usable.

    Usable means present and labelled with this host's protocol version.
    """
    status = image_status(tag, client=client)
    if not status.exists:
        raise ImageError(
            f"sandbox image {tag!r} not found on the Docker engine. "
            f"Build it with `toolscript image build --tag {tag}` "
            f"(offline: `bash scripts/make-base-image.sh` then "
            f"`toolscript image build --base-image {OFFLINE_BASE_IMAGE} --tag {tag}`)."
        )
    if not status.compatible:
        raise ImageError(
            f"sandbox image {tag!r} speaks protocol {status.protocol}, this toolscript speaks "
            f"{status.expected_protocol}. Rebuild it with `toolscript image build --tag {tag}`."
        )
    if status.python_env:
        raise ImageError(
            f"sandbox image {tag!r} sets {', '.join(status.python_env)} in its environment; "
            "the sandbox interpreter would read them at start. Build it without (`toolscript "
            "image build` does)."
        )
    return status


# ------------------------------------------------------------------- build


def build_image(
    *,
    base_image: str = DEFAULT_BASE_IMAGE,
    tag: str = DEFAULT_IMAGE,
    wheelhouse: Path | None = None,
    client: docker.DockerClient | None = None,
    pull: bool = False,
    log: Callable[[str], None] | None = None,
) -> str:
    """Build the sandbox image on the engine and return its image id.

    ``base_image`` must provide ``python3`` with the ``venv`` module
    (``python:3.12-slim``, or the offline ``toolscript-base:bookworm``).
    ``wheelhouse`` is a folder of wheels to install instead of downloading
    RestrictedPython with pip on the host. ``log`` receives build output lines.
    """
    import docker.errors

    client = client or docker_client(timeout=600)
    protocol = expected_protocol()
    src = _sandbox_dir()
    digest = source_digest(src)
    with tempfile.TemporaryDirectory(prefix="toolscript-image-") as tmp:
        ctx = Path(tmp)
        (ctx / "Dockerfile").write_text(_dockerfile_text(), encoding="utf-8")
        for p in _sandbox_files(src):
            dst = ctx / "sandbox" / p.relative_to(src)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, dst)
        if wheelhouse is not None:
            wheels = sorted(Path(wheelhouse).glob("*.whl"))
            if not wheels:
                raise ImageError(f"no wheels in wheelhouse {wheelhouse}")
            (ctx / "wheelhouse").mkdir()
            for w in wheels:
                shutil.copyfile(w, ctx / "wheelhouse" / w.name)
        else:
            build_wheelhouse(ctx / "wheelhouse")
        output: list[str] = []
        try:
            stream = client.api.build(
                path=str(ctx),
                tag=tag,
                buildargs={
                    "BASE_IMAGE": base_image,
                    "PROTOCOL_VERSION": str(protocol),
                    "SOURCE_DIGEST": digest,
                },
                pull=pull,
                rm=True,
                forcerm=True,
                decode=True,
            )
            image_id = _follow_build(stream, output, log)
        except docker.errors.APIError as exc:
            raise ImageError(f"building {tag!r} on base {base_image!r} failed: {exc}") from exc
        if image_id is None:
            tail = "".join(output[-30:])
            hint = ""
            if base_image == DEFAULT_BASE_IMAGE:
                hint = (
                    f"\nWithout a reachable registry, make an offline base with "
                    f"`bash scripts/make-base-image.sh` and pass --base-image {OFFLINE_BASE_IMAGE}."
                )
            raise ImageError(f"building {tag!r} on base {base_image!r} failed:\n{tail}{hint}")
    _prune_old_build_stages(client)
    return image_id


def _prune_old_build_stages(client: docker.DockerClient) -> None:
    """Remove untagged build-stage images of earlier builds (keep the newest as cache)."""
    try:
        stages = client.api.images(filters={"dangling": True, "label": f"{STAGE_LABEL}=1"})
        for old in sorted(stages, key=lambda i: i.get("Created", 0), reverse=True)[1:]:
            client.api.remove_image(old["Id"], noprune=False)
    except Exception:  # only housekeeping; an image in use by a build stays
        pass


def _follow_build(stream: Any, output: list[str], log: Callable[[str], None] | None) -> str | None:
    image_id: str | None = None
    for chunk in stream:
        if "stream" in chunk:
            line = str(chunk["stream"])
            output.append(line)
            if log is not None and line.strip():
                log(line.rstrip("\n"))
        if "error" in chunk:
            output.append(str(chunk["error"]) + "\n")
            return None
        aux = chunk.get("aux")
        if isinstance(aux, dict) and "ID" in aux:
            image_id = str(aux["ID"])
    return image_id


def ensure_image(
    tag: str = DEFAULT_IMAGE,
    *,
    base_image: str = DEFAULT_BASE_IMAGE,
    client: docker.DockerClient | None = None,
    log: Callable[[str], None] | None = None,
) -> ImageStatus:
    """Build ``tag`` if it is missing or stale; return its (new) status."""
    client = client or docker_client()
    status = image_status(tag, client=client)
    if not status.up_to_date:
        build_image(base_image=base_image, tag=tag, client=client, log=log)
        status = image_status(tag, client=client)
    return status
