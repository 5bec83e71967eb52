#!/usr/bin/env bash
# Installs the other-language clients for the cross-language tests, from package registries (PyPI, the Go
# module proxy), into a cache outside the clone, rebuilt only when their sources change.
#
#   bash scripts/install-clients.sh python   venv with clients/python installed; prints its python
#   bash scripts/install-clients.sh go       clients/go's commands built; prints their folder
#   bash scripts/install-clients.sh all      both (CI)
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
  local dir="$CACHE/python-client-$(digest clients/python)"
  if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c 'import hotel_booking_client' 2>/dev/null; then
    log "python client cached at $dir"
  else
    command -v python3 >/dev/null || { log "python3 is needed for the Python client"; exit 1; }
    log "creating $dir (pip install ./clients/python: temporalio, cryptography)"
    rm -rf "$dir" && python3 -m venv "$dir"
    "$dir/bin/pip" install --quiet --disable-pip-version-check ./clients/python >&2
  fi
  echo "$dir/bin/python"
}

go_client() {
  local dir="$CACHE/go-client-$(digest clients/go)"
  if [ -x "$dir/book" ] && [ -x "$dir/codec-roundtrip" ]; then
    log "go client cached at $dir"
  else
    command -v go >/dev/null || { log "Go is needed for the Go client"; exit 1; }
    log "building clients/go into $dir (modules from the Go module proxy)"
    mkdir -p "$dir.tmp"
    (cd clients/go && GOFLAGS=-mod=mod go build -o "$dir.tmp/" ./cmd/book ./cmd/codec-roundtrip) >&2
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
  fi
  echo "$dir"
}

case "${1:-all}" in
  python) python_client ;;
  go) go_client ;;
  all) python_client; go_client ;;
  *) log "usage: $0 [python|go|all]"; exit 2 ;;
esac
