"""Image checks and the unreachable-engine error."""

from __future__ import annotations

import io
import tarfile
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from toolscript.runtime.backends.docker import image as image_mod
from toolscript.runtime.backends.docker.backend import DockerBackend

from toolscript.errors import BackendUnavailable, ImageError

REPO = Path(__file__).resolve().parents[2]


def test_top_level_dockerfile_is_the_packaged_one() -> None:
    # ./Dockerfile (for `docker build .`) is a symlink to the file the package
    # ships and `toolscript image build` uses, so the two cannot drift apart.
    assert (REPO / "Dockerfile").resolve() == (REPO / "runtime" / "sandbox.Dockerfile")
    packaged = resources.files("toolscript.runtime").joinpath("sandbox.Dockerfile")
    assert packaged.read_text(encoding="utf-8") == (REPO / "Dockerfile").read_text(encoding="utf-8")


def test_unreachable_engine_raises_backend_unavailable_with_a_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-such-docker.sock")
    with pytest.raises(BackendUnavailable) as info:
        DockerBackend(pool_size=0)
    message = str(info.value)
    assert "no-such-docker.sock" in message
    assert "DOCKER_HOST" in message and "dockerd" in message and "install-docker.sh" in message


def test_tcp_engine_that_does_not_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:9")
    with pytest.raises(BackendUnavailable, match=r"127\.0\.0\.1:9"):
        DockerBackend(pool_size=0)


def test_missing_image_is_an_image_error(docker_client: Any) -> None:
    with pytest.raises(ImageError, match="toolscript image build"):
        DockerBackend("toolscript-sandbox:no-such-tag", pool_size=0, docker_client=docker_client)


def _tiny_image(client: Any, tag: str, protocol: str) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("marker")
        tar.addfile(info, io.BytesIO(b""))
    client.api.import_image_from_data(
        buf.getvalue(), repository=tag, changes=[f"LABEL org.toolscript.protocol={protocol}"]
    )


def test_image_of_another_protocol_is_refused(docker_client: Any) -> None:
    tag = "toolscript-test-protocol:999"
    _tiny_image(docker_client, tag, "999")
    try:
        status = image_mod.image_status(tag, client=docker_client)
        assert status.exists and status.protocol == 999 and not status.compatible
        with pytest.raises(ImageError, match=r"protocol 999.*toolscript image build"):
            DockerBackend(tag, pool_size=0, docker_client=docker_client)
    finally:
        docker_client.api.remove_image(tag, force=True)


def test_status_of_the_built_image(docker_client: Any, image: str) -> None:
    status = image_mod.check_image(image, client=docker_client)
    assert status.up_to_date and status.protocol == image_mod.expected_protocol()
    labels = docker_client.images.get(image).labels
    assert labels["org.toolscript.protocol"] == str(image_mod.expected_protocol())
    attrs = docker_client.images.get(image).attrs["Config"]
    assert attrs["User"] == "10001:10001"
    assert attrs["Entrypoint"] == [
        "/opt/toolscript/venv/bin/python",
        "-I",
        "-m",
        "toolscript.sandbox",
    ]
