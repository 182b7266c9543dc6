# The referee server (`moon serve`) as an image.
#
#   docker build -t moon-arena/referee .          # FROM python:3.11-slim, from a registry
#   docker build --build-arg BASE=IMAGE -t moon-arena/referee .
#                                                 # any local image with Python 3.11+ and pip
#
# It serves TCP 50051 (for MatchService: create and watch matches) and a Unix socket in the
# volume /run/moon, which bot containers mount to play with no network at all; records go
# to the volume /data. compose.yaml shows a whole competition set-up (docs/sandbox.md).
ARG BASE=python:3.11-slim
FROM ${BASE}

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /opt/moon-arena
COPY pyproject.toml ./
COPY sdk/python ./sdk/python
COPY arena ./arena
RUN pip install --no-compile ./sdk/python . \
    && mkdir -p /run/moon /data \
    && chown 10001:10001 /run/moon /data

USER 10001:10001
VOLUME ["/run/moon", "/data"]
EXPOSE 50051
# umask 0: bot containers run as another uid and must be able to connect to the socket;
# the join token, not the file mode, is what guards a seat.
ENTRYPOINT ["/bin/sh", "-c", "umask 0000 && exec moon serve \"$@\"", "moon-serve"]
CMD ["--address", "0.0.0.0:50051", "--unix-socket", "/run/moon/referee.sock", \
     "--records", "/data/records"]
HEALTHCHECK --interval=30s --timeout=5s \
    CMD python -c "import grpc; from grpc_health.v1 import health_pb2 as h, health_pb2_grpc as g; \
c = grpc.insecure_channel('unix:///run/moon/referee.sock'); \
assert g.HealthStub(c).Check(h.HealthCheckRequest(), timeout=3).status == 1"
