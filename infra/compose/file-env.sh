#!/bin/sh
# Reads each secret the compose file hands a container as a file (`X_FILE=/run/secrets/x`) into the variable the
# program reads (`X`), then runs the program: for images whose programs take secrets only from the environment
# (the Temporal server's config template, the worker, the sandbox). The value never sits in docker-compose.yml, in
# an image or in `docker inspect`; a file's one trailing newline is dropped. A variable given both ways takes the
# file. Only files in the secrets
# folder (FILE_ENV_DIR, /run/secrets) count: another `*_FILE` (TEMPORAL_CONFIG_FILE) is a path its program reads.
set -eu
dir="${FILE_ENV_DIR:-/run/secrets}"
for name in $(env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)_FILE=.*/\1/p'); do
  eval "file=\${${name}_FILE}"
  case "$file" in
    "$dir"/*) ;;
    *) continue ;;
  esac
  if [ ! -r "$file" ]; then
    echo "file-env: ${name}_FILE: cannot read $file" >&2
    exit 1
  fi
  value="$(cat "$file")"
  if [ -z "$value" ]; then
    echo "file-env: ${name}_FILE: $file is empty" >&2
    exit 1
  fi
  export "$name=$value"
  unset "${name}_FILE"
done
exec "$@"
