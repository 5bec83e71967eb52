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

# --- runtime (default): production dependencies and the compiled src/ only -------------------
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/lib ./lib
# Unprivileged: the image's built-in `node` user. It only reads /app, except the worker's
# workflow bundle, which is built in memory at start.
USER node
# Node flag: src/config/node-flags.ts says why, with the figures (a unit test checks this copy).
CMD ["node", "--optimize-for-size", "lib/worker.js"]
