# The worker image (default target: src/ only, `node lib/worker.js`) and, as target `sandbox`, the sandbox
# supplier for the compose demo (dev/sandbox; development tooling stays out of the worker image).
# Debian (glibc) rather than Alpine: the Temporal core bridge ships prebuilt glibc binaries.

# --- build: compile TypeScript (tsc -p tsconfig.build.json -> lib/) ---------------------------
FROM node:20-bookworm-slim AS build
WORKDIR /app
# Lockfile first, so the dependency layer is cached until package*.json change.
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json tsconfig.dev.json ./
COPY src ./src
COPY dev ./dev
RUN npm run build && npx tsc -p tsconfig.dev.json

# --- sandbox: the sandbox supplier (dev/sandbox and the src modules it uses), for docker-compose ------
FROM node:20-bookworm-slim AS sandbox
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/lib-dev ./lib-dev
USER node
CMD ["node", "lib-dev/dev/sandbox/main.js"]

# --- certs: docker-compose's one-shot `certs` service. dev/prod/certs.ts (the CA and certificates `npm run stack:prod`
# makes, the one source of their subjects) compiled alone: it needs Node's built-ins and the `openssl` command only.
FROM build AS certs-build
COPY infra/certs/tsconfig.json ./infra/certs/
RUN npx tsc -p infra/certs/tsconfig.json

FROM node:20-bookworm-slim AS certs
RUN apt-get update && apt-get install -y --no-install-recommends openssl && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=certs-build /app/lib-dev/certs/certs.js ./certs.js
ENTRYPOINT ["node", "certs.js"]

# --- temporal-authz: the Temporal server with the certificate claim mapper and authorizer (dev/temporal/authz-server,
# what `scripts/install-temporal.sh prod` builds for `npm run stack:prod`), for docker-compose's Temporal nodes. Built
# static (no cgo: its SQL drivers are pure Go) to run in the temporalio/server image (Alpine), on the same server version.
FROM golang:1.25-bookworm AS temporal-authz-build
WORKDIR /src
COPY dev/temporal/authz-server/go.mod dev/temporal/authz-server/go.sum ./
RUN GOFLAGS=-mod=mod go mod download
COPY dev/temporal/authz-server/main.go ./
RUN CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -o /out/temporal-server .

FROM temporalio/server:1.29.1 AS temporal-authz
COPY --from=temporal-authz-build /out/temporal-server /opt/temporal-authz/temporal-server

# --- runtime (default): production dependencies and the compiled src/ only -------------------
FROM node:20-bookworm-slim AS runtime
# The commit the image is built from (`docker build --build-arg BUILD_COMMIT=$(git rev-parse --short=12 HEAD)`), or a
# digest of its source, in hex: with the package version it is the workers' build id (WORKER_BUILD_ID's default), and
# Worker Versioning sends a pinned run's tasks to whichever worker claims that id. Without it every image of one
# version would claim the same id, so the image refuses to build, first, before anything else is done. Hex only, 7 to
# 64 digits: the id keeps the first 12 (src/runtime/config/build.ts), and a dirty tree has no commit that names it.
ARG BUILD_COMMIT
RUN case "$BUILD_COMMIT" in *[!0-9a-f]*|'') ok=no ;; *) ok=yes ;; esac; \
    if [ "$ok" = no ] || [ ${#BUILD_COMMIT} -lt 7 ] || [ ${#BUILD_COMMIT} -gt 64 ]; then \
      echo "BUILD_COMMIT must be the commit (or a source digest) the image is built from, 7 to 64 hex digits, got '$BUILD_COMMIT': docker build --build-arg BUILD_COMMIT=\$(git rev-parse --short=12 HEAD) (docker compose: BUILD_COMMIT=... in its environment), from a committed tree" >&2; \
      exit 1; \
    fi
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/lib ./lib
# The commit checked above, for the workers to compute their build id from.
ENV BUILD_COMMIT=${BUILD_COMMIT}
# Unprivileged: the image's built-in `node` user. It only reads /app, except the worker's
# workflow bundle, which is built in memory at start.
USER node
# Node flag: src/runtime/config/node-flags.ts says why, with the figures (a unit test checks this copy).
CMD ["node", "--optimize-for-size", "lib/worker.js"]
