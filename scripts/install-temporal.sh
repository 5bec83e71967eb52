#!/usr/bin/env bash
# Builds the real Temporal servers this project tests against, from package registries only
# (the Go module proxy and Maven Central), into a cache outside the clone so a second run reuses them.
#
#   TEMPORAL_BIN_CACHE   cache folder (default: ~/.cache/hotel-booking-orchestrator)
#   TEMPORAL_CLI_VERSION / TEMPORAL_TEST_SERVER_VERSION   pinned versions (defaults below)
#
# Prints the two executables' paths on its last two lines.
set -euo pipefail

CLI_VERSION="${TEMPORAL_CLI_VERSION:-v1.5.1}"
TS_VERSION="${TEMPORAL_TEST_SERVER_VERSION:-1.31.0}"
CACHE="${TEMPORAL_BIN_CACHE:-$HOME/.cache/hotel-booking-orchestrator}"

cli_dir="$CACHE/temporal-cli-$CLI_VERSION"
cli="$cli_dir/temporal"
ts_dir="$CACHE/temporal-test-server-$TS_VERSION"
ts="$ts_dir/temporal-test-server"

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

case "${1:-all}" in
  cli) build_cli ;;
  test-server) build_test_server ;;
  all) build_test_server; build_cli ;;
  *) log "usage: $0 [all|cli|test-server]"; exit 2 ;;
esac
echo "$cli"
echo "$ts"
