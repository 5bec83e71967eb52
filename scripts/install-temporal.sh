#!/usr/bin/env bash
# Builds the real Temporal servers this project tests against, from package registries only
# (the Go module proxy and Maven Central), into a cache outside the clone so a second run reuses them.
#
#   cli           the Temporal CLI (dev server with the Web UI embedded)
#   test-server   the Java time-skipping test server
#   prod          the production engine: temporal-server, temporal-sql-tool and the PostgreSQL schema
#                 folders they ship with, and the standalone Web UI server (npm run stack:prod)
#   all           cli and test-server (what `npm test` needs without the production engine)
#
#   TEMPORAL_BIN_CACHE   cache folder (default: ~/.cache/hotel-booking-orchestrator)
#   TEMPORAL_CLI_VERSION / TEMPORAL_TEST_SERVER_VERSION / TEMPORAL_SERVER_VERSION / TEMPORAL_UI_VERSION
#                        pinned versions (defaults below; dev/temporal/versions.json is the source of truth)
#
# Prints the built executables' paths, one per line.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
versions="$here/../dev/temporal/versions.json"
pinned() { node -e 'process.stdout.write(require(process.argv[1])[process.argv[2]])' "$versions" "$1"; }

CLI_VERSION="${TEMPORAL_CLI_VERSION:-$(pinned cli)}"
TS_VERSION="${TEMPORAL_TEST_SERVER_VERSION:-$(pinned testServer)}"
SERVER_VERSION="${TEMPORAL_SERVER_VERSION:-$(pinned server)}"
UI_VERSION="${TEMPORAL_UI_VERSION:-$(pinned ui)}"
CACHE="${TEMPORAL_BIN_CACHE:-$HOME/.cache/hotel-booking-orchestrator}"

cli_dir="$CACHE/temporal-cli-$CLI_VERSION"
cli="$cli_dir/temporal"
ts_dir="$CACHE/temporal-test-server-$TS_VERSION"
ts="$ts_dir/temporal-test-server"
server_dir="$CACHE/temporal-server-$SERVER_VERSION"
server="$server_dir/temporal-server"
ui_dir="$CACHE/temporal-ui-server-$UI_VERSION"
ui="$ui_dir/ui-server"

log() { printf '[install-temporal] %s\n' "$*" >&2; }

build_cli() {
  if [ -x "$cli" ]; then log "Temporal CLI $CLI_VERSION cached at $cli"; return; fi
  command -v go >/dev/null || { log "Go is needed to build the Temporal CLI (or set TEMPORAL_CLI_PATH)"; exit 1; }
  log "building Temporal CLI $CLI_VERSION with go install (about 3-4 min cold on 2 cores)"
  local start=$SECONDS
  mkdir -p "$cli_dir.tmp"
  GOBIN="$cli_dir.tmp" GOFLAGS=-mod=mod go install "github.com/temporalio/cli/cmd/temporal@$CLI_VERSION"
  rm -rf "$cli_dir" && mv "$cli_dir.tmp" "$cli_dir"
  log "Temporal CLI built in $((SECONDS - start)) s"
}

build_test_server() {
  if [ -x "$ts" ]; then log "Temporal test server $TS_VERSION cached at $ts"; return; fi
  command -v mvn >/dev/null || { log "Maven and Java 17 are needed for the test server (or set TEMPORAL_TEST_SERVER_PATH)"; exit 1; }
  log "resolving io.temporal:temporal-test-server:$TS_VERSION from Maven Central"
  local start=$SECONDS tmp="$ts_dir.tmp"
  rm -rf "$tmp" && mkdir -p "$tmp"
  cat >"$tmp/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.hotel-booking</groupId>
  <artifactId>temporal-test-server-classpath</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>io.temporal</groupId>
      <artifactId>temporal-test-server</artifactId>
      <version>$TS_VERSION</version>
    </dependency>
  </dependencies>
</project>
POM
  (cd "$tmp" && mvn -q -B dependency:build-classpath -Dmdep.outputFile=classpath.txt >&2)
  # The executable the SDK starts: `<path> <port> [--enable-time-skipping]`.
  cat >"$tmp/temporal-test-server" <<'SH'
#!/usr/bin/env bash
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec java ${TEMPORAL_TEST_SERVER_JAVA_OPTS:--Xmx512m} -cp "$(cat "$here/classpath.txt")" io.temporal.testserver.TestServer "$@"
SH
  chmod +x "$tmp/temporal-test-server"
  rm -rf "$ts_dir" && mv "$tmp" "$ts_dir"
  log "test server resolved in $((SECONDS - start)) s"
}

# The server (all four services in one binary), its SQL schema tool, and the schema folders the tool
# applies: they ship inside the server module, so they are copied from the module cache beside the binaries.
build_server() {
  if [ -x "$server" ] && [ -x "$server_dir/temporal-sql-tool" ] && [ -d "$server_dir/schema/postgresql" ]; then
    log "Temporal server $SERVER_VERSION cached at $server_dir"; return
  fi
  command -v go >/dev/null || { log "Go is needed to build the Temporal server"; exit 1; }
  log "building Temporal server $SERVER_VERSION and temporal-sql-tool with go install (about 2-4 min cold)"
  local start=$SECONDS tmp="$server_dir.tmp"
  rm -rf "$tmp" && mkdir -p "$tmp"
  GOBIN="$tmp" GOFLAGS=-mod=mod go install "go.temporal.io/server/cmd/server@$SERVER_VERSION" \
    "go.temporal.io/server/cmd/tools/sql@$SERVER_VERSION"
  mv "$tmp/server" "$tmp/temporal-server" && mv "$tmp/sql" "$tmp/temporal-sql-tool"
  local module
  module="$(GOFLAGS=-mod=mod go mod download -json "go.temporal.io/server@$SERVER_VERSION" | node -e \
    'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s).Dir))')"
  mkdir -p "$tmp/schema" && cp -R "$module/schema/postgresql" "$tmp/schema/" && chmod -R u+w "$tmp/schema"
  rm -rf "$server_dir" && mv "$tmp" "$server_dir"
  log "Temporal server built in $((SECONDS - start)) s"
}

# temporal-server with our certificate-subject claim mapper and certificate-roles authorizer (dev/temporal/authz-server),
# the nodes' binary when the production topology runs with mutual TLS. Named by a hash of its sources (the same
# as dev/temporal/binaries.ts computes), so a change builds a new one; the server's packages come from the build
# cache of build_server, so it takes seconds after that.
build_server_authz() {
  local src="$here/../dev/temporal/authz-server" hash out
  hash="$(cat "$src/go.mod" "$src/go.sum" "$src/main.go" | sha256sum | cut -c1-12)"
  out="$server_dir/temporal-server-authz-$hash"
  if [ -x "$out" ]; then log "Temporal server with authorization cached at $out"; return; fi
  command -v go >/dev/null || { log "Go is needed to build the Temporal server"; exit 1; }
  log "building the Temporal server with certificate authorization (dev/temporal/authz-server)"
  local start=$SECONDS
  (cd "$src" && GOFLAGS=-mod=mod go build -o "$out.tmp" .) && mv "$out.tmp" "$out"
  log "built in $((SECONDS - start)) s"
  server_authz="$out"
}

build_ui() {
  if [ -x "$ui" ]; then log "Temporal Web UI server $UI_VERSION cached at $ui"; return; fi
  command -v go >/dev/null || { log "Go is needed to build the Temporal Web UI server"; exit 1; }
  log "building the Temporal Web UI server $UI_VERSION with go install"
  local start=$SECONDS tmp="$ui_dir.tmp"
  rm -rf "$tmp" && mkdir -p "$tmp"
  GOBIN="$tmp" GOFLAGS=-mod=mod go install "github.com/temporalio/ui-server/v2/cmd/server@$UI_VERSION"
  mv "$tmp/server" "$tmp/ui-server"
  rm -rf "$ui_dir" && mv "$tmp" "$ui_dir"
  log "Web UI server built in $((SECONDS - start)) s"
}

case "${1:-all}" in
  cli) build_cli; echo "$cli" ;;
  test-server) build_test_server; echo "$ts" ;;
  prod) build_server; build_server_authz; build_ui; echo "$server"; echo "$ui" ;;
  all) build_test_server; build_cli; echo "$cli"; echo "$ts" ;;
  everything) build_test_server; build_cli; build_server; build_server_authz; build_ui; echo "$cli"; echo "$ts"; echo "$server"; echo "$ui" ;;
  *) log "usage: $0 [all|cli|test-server|prod|everything]"; exit 2 ;;
esac
