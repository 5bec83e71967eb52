# Worker and sandbox supplier image: `node lib/worker.js` (default) or `node lib/sandbox/main.js`.
# Debian (glibc) rather than Alpine: the Temporal core bridge ships prebuilt glibc binaries.

# --- build: compile TypeScript (tsc -p tsconfig.build.json -> lib/) ---------------------------
FROM node:20-bookworm-slim AS build
WORKDIR /app
# Lockfile first, so the dependency layer is cached until package*.json change.
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# --- runtime: production dependencies and compiled code only ----------------------------------
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/lib ./lib
# Unprivileged: the image's built-in `node` user. It only reads /app, except the worker's
# workflow bundle, which is built in memory at start.
USER node
CMD ["node", "lib/worker.js"]
