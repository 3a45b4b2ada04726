"""The docker backend: containers as sandboxes.

``backend`` holds :class:`~toolscript.runtime.backends.docker.backend.DockerBackend`
(container-per-session and process isolation, warm pools, stale-container
collection); ``process`` runs walled sessions forked from a zygote inside a
shared container; ``socket_channel`` is the framed socket link into a
container; ``image`` builds and checks the sandbox image.
"""
