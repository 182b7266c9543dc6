# The referee as an image: `moon serve` (or any other `moon` command, such as the
# competition host, `moon host run`) as the unprivileged user 10001, installed from the
# wheels that `make dist` builds. Nothing is pulled from a registry:
#
#   make image        # dist/*.whl, dist/wheelhouse/, the base image, then this build:
#   docker build --build-arg BASE=moon-arena/python:3.11 -t moon-arena/referee .
#
# BASE: `moon-arena/python:<X.Y>` is this machine's own Python made into an image by
# `python -m arena.sandbox python-image` (arena/sandbox/python_image.py); any image with
# the same Python version works too (`--build-arg BASE=python:3.11-slim` where a registry
# is reachable). The build context is dist/ only (.dockerignore): our wheels and the
# wheelhouse of their dependencies, installed with --no-index.
#
# It serves TCP 50051 (bots, and MatchService to create and watch matches: it needs
# MOON_ADMIN_TOKEN, which clients send as a bearer token) and a Unix socket in /run/moon,
# which bot containers mount to play with no network at all; records go to the volume
# /data. The health check asks the referee's gRPC health service over that socket; for
# another server set MOON_HEALTHCHECK (an address or an http:// URL, python -m
# arena.referee.healthcheck). The competition host, for example:
#
#   docker run -d -p 127.0.0.1:8000:8000 -v moon-data:/data \
#       -e MOON_HEALTHCHECK=http://127.0.0.1:8000/api/status \
#       moon-arena/referee host run /data/competition --address 0.0.0.0:8000
#
# compose.yaml shows a whole competition set-up (docs/sandbox.md).
ARG BASE=moon-arena/python:3.11

FROM ${BASE} AS install
LABEL moon-arena=1
COPY dist/ /tmp/dist/
# pip runs from its own wheel in the wheelhouse (the base needs no pip).
RUN for wheel in /tmp/dist/wheelhouse/pip-*.whl; do pip="$wheel/pip"; done \
    && python3 -m venv --without-pip /opt/moon-arena \
    && /opt/moon-arena/bin/python "$pip" install --no-index --no-cache-dir \
        --disable-pip-version-check --root-user-action=ignore \
        --find-links /tmp/dist --find-links /tmp/dist/wheelhouse 'moon-arena[host]'

FROM ${BASE}
LABEL moon-arena=1 org.opencontainers.image.title="Moon Arena referee" \
      org.opencontainers.image.licenses=MIT
COPY --from=install /opt/moon-arena /opt/moon-arena
ENV PATH=/opt/moon-arena/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
# /data and /run/moon belong to the user the server runs as (no mkdir/chown in the base).
RUN ["python3", "-c", "import os\nfor d in ('/data', '/run/moon'):\n    os.makedirs(d, exist_ok=True)\n    os.chown(d, 10001, 10001)"]

USER 10001:10001
WORKDIR /data
VOLUME ["/run/moon", "/data"]
EXPOSE 50051 8000
# `moon serve` makes its socket with umask 0: bot containers run as another user and must
# be able to connect; the join token, not the file mode, guards a seat.
ENTRYPOINT ["/bin/sh", "-c", "[ \"$1\" != serve ] || umask 0000; exec moon \"$@\"", "moon"]
CMD ["serve", "--address", "0.0.0.0:50051", "--unix-socket", "/run/moon/referee.sock", \
     "--records", "/data/records"]
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python3", "-m", "arena.referee.healthcheck"]
