# syntax=docker/dockerfile:1
# Build the project's wheel in one stage, run it in a slim image with no build tools and a non-root
# user. Every dependency comes from the lock (requirements/runtime.txt: pinned, hash-checked, made
# by scripts/lock.sh for CPython 3.11 on Linux x86_64, as this image is).
FROM python:3.11-slim AS build
WORKDIR /src
COPY requirements/build.txt ./requirements/
RUN pip install --no-cache-dir --require-hashes -r requirements/build.txt
COPY pyproject.toml README.md ./
COPY engine ./engine
COPY app ./app
RUN pip wheel --no-cache-dir --no-deps --no-build-isolation --wheel-dir /wheels .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    DATABASE_URL=sqlite+aiosqlite:////data/mercyless.sqlite3 EMBEDDED_STORE=/data/store
RUN useradd --create-home --uid 10001 mercyless \
    && mkdir -p /data && chown mercyless:mercyless /data
WORKDIR /srv/mercyless
COPY requirements/runtime.txt /tmp/requirements.txt
RUN pip install --no-cache-dir --require-hashes -r /tmp/requirements.txt && rm /tmp/requirements.txt
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-deps /wheels/*.whl && rm -rf /wheels
# the app serves web/ and runs migrations/ from beside its package
COPY --chown=mercyless:mercyless web ./web
COPY --chown=mercyless:mercyless migrations ./migrations
COPY --chown=mercyless:mercyless alembic.ini ./
ENV MERCYLESS_HOME=/srv/mercyless
USER 10001
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2).status != 200)"]
CMD ["mercyless", "serve", "--host", "0.0.0.0", "--port", "8000"]
