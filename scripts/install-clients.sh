#!/usr/bin/env bash
# Installs the other-language clients for the cross-language tests, from package registries (PyPI, the Go
# module proxy), into a cache outside the clone, rebuilt only when their sources change.
#
#   bash scripts/install-clients.sh python   venv with clients/python installed (CACHE/python-client-venv);
#                                            prints its python on the last line
#   bash scripts/install-clients.sh python-wheel
#                                            clients/python built as the wheel partners install
#                                            (CACHE/python-client-wheel); prints its path on the last line
#   bash scripts/install-clients.sh go       clients/go's book and codec-roundtrip built (CACHE/go-client);
#                                            prints book's path on the last line
#   bash scripts/install-clients.sh all      all three (CI)
#
#   CLIENTS_CACHE   cache folder (default: ~/.cache/hotel-booking-orchestrator)
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${CLIENTS_CACHE:-$HOME/.cache/hotel-booking-orchestrator}"
log() { printf '[install-clients] %s\n' "$*" >&2; }

# A digest of a client's sources: a change makes a new cache entry; build leftovers do not count.
digest() {
  find "$1" -type f -not -path '*/__pycache__/*' -not -path '*.egg-info/*' -not -path '*/build/*' -print0 |
    sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12
}

python_client() {
  # One venv, reinstalled in place when clients/python changes (a stamp holds the digest it was built
  # from), so repeated changes reuse pip's cache instead of leaving a 100 MB venv behind each time.
  local venv="$CACHE/python-client-venv" want
  want="$(digest clients/python)"
  mkdir -p "$CACHE"
  # Test files, CI and a developer may ask at once; one installs, the others wait and reuse it.
  exec 8>"$CACHE/python-client-venv.lock"
  flock 8
  if [ "$(cat "$venv/.source-digest" 2>/dev/null)" = "$want" ] &&
    "$venv/bin/python" -c 'import hotel_booking_client' 2>/dev/null; then
    log "python client cached at $venv"
  else
    command -v python3 >/dev/null || { log "python3 (3.9 or later) is needed for the Python client"; exit 1; }
    rm -f "$venv/.source-digest"
    # --clear when the venv's interpreter is gone (python3 upgraded or removed); otherwise keep its packages.
    if ! "$venv/bin/python" -c '' 2>/dev/null; then
      python3 -m venv --clear "$venv" >&2 ||
        { log "python3 -m venv failed (on Debian: apt-get install python3-venv)"; exit 1; }
    fi
    # pip builds in the source folder; a copy keeps build/ and *.egg-info out of the clone.
    local src="$CACHE/python-client-src"
    rm -rf "$src" && mkdir -p "$src" && cp -R clients/python/. "$src/"
    rm -rf "$src/build" "$src"/src/*.egg-info
    log "installing clients/python into $venv (temporalio, cryptography from PyPI)"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$src" >&2
    rm -rf "$src"
    "$venv/bin/python" -c 'import hotel_booking_client'
    echo "$want" >"$venv/.source-digest"
    # The folders of this script's earlier layout, one per source digest.
    rm -rf "$CACHE"/python-client-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]
  fi
  flock -u 8
  echo "$venv/bin/python"
}

python_wheel() {
  # Built with the client venv's pip (a python3 from Debian may have no pip of its own), from a copy as above;
  # setuptools comes from PyPI into pip's isolated build environment. One wheel per source digest.
  local dir="$CACHE/python-client-wheel" want pip
  pip="$(dirname "$(python_client)")/pip"
  want="$(digest clients/python)"
  exec 7>"$CACHE/python-client-wheel.lock"
  flock 7
  if [ "$(cat "$dir/.source-digest" 2>/dev/null)" = "$want" ] && compgen -G "$dir/*.whl" >/dev/null; then
    log "python wheel cached in $dir"
  else
    local src="$CACHE/python-wheel-src"
    rm -rf "$dir" "$src" && mkdir -p "$dir" "$src" && cp -R clients/python/. "$src/"
    rm -rf "$src/build" "$src"/src/*.egg-info
    log "building the wheel of clients/python into $dir"
    "$pip" wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$dir" "$src" >&2
    rm -rf "$src"
    echo "$want" >"$dir/.source-digest"
  fi
  flock -u 7
  compgen -G "$dir/*.whl"
}

go_client() {
  # One folder, rebuilt in place when the sources that go into the programs (or the Go toolchain) change;
  # a stamp holds the digest it was built from. Go's own build cache stays where go keeps it.
  local dir="$CACHE/go-client" want
  command -v go >/dev/null || { log "Go (1.26 or later, as clients/go/go.mod says) is needed for the Go client"; exit 1; }
  want="$({ go env GOVERSION
    find clients/go -type f \( -name '*.go' -not -name '*_test.go' -o -name go.mod -o -name go.sum \) -print0 |
      sort -z | xargs -0 sha256sum; } | sha256sum | cut -c1-12)"
  mkdir -p "$CACHE"
  # Test files, CI and a developer may ask at once; one builds, the others wait and reuse it.
  exec 9>"$CACHE/go-client.lock"
  flock 9
  if [ "$(cat "$dir/.source-digest" 2>/dev/null)" = "$want" ] && [ -x "$dir/book" ] && [ -x "$dir/codec-roundtrip" ]; then
    log "go client cached at $dir"
  else
    log "building clients/go into $dir (modules from the Go module proxy; a first build takes minutes)"
    rm -rf "$dir" && mkdir -p "$dir"
    # -mod=readonly: go.mod and go.sum pin every module; a build never rewrites them in the clone.
    (cd clients/go && go mod download && go build -mod=readonly -o "$dir/" ./cmd/book ./cmd/codec-roundtrip) >&2
    echo "$want" >"$dir/.source-digest"
    # The folders of this script's earlier layout, one per source digest.
    rm -rf "$CACHE"/go-client-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]
  fi
  flock -u 9
  echo "$dir/book"
}

case "${1:-all}" in
  python) python_client ;;
  python-wheel) python_wheel ;;
  go) go_client ;;
  all) python_client; python_wheel >/dev/null; go_client ;;
  *) log "usage: $0 [python|python-wheel|go|all]"; exit 2 ;;
esac
