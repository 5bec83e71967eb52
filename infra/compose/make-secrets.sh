#!/bin/sh
# Makes the secrets docker-compose.yml reads (its `secrets:`), once per installation, into infra/compose/secrets/:
# random values, none shared with any other installation, never committed (the folder's .gitignore). A file that
# exists is kept: the payload keys decrypt every history written with them, and the others are in use. Run it
# before the first `docker compose up`; rotate one by replacing its file (payload keys: add a key, keep the old).
#   sh infra/compose/make-secrets.sh
# The folder is readable by its owner only; the files in it are readable by all, because each container reads its
# secret as the image's own user (PostgreSQL's, Temporal's, Node's, nginx's), which compose does not map.
set -eu
dir="$(cd "$(dirname "$0")" && pwd)/secrets"
mkdir -p "$dir"
chmod 700 "$dir"
umask 022

# secret NAME COMMAND: writes the command's output to secrets/NAME unless it exists.
secret() {
  if [ -s "$dir/$1" ]; then
    echo "kept    secrets/$1"
  else
    sh -c "$2" >"$dir/$1.new" && mv "$dir/$1.new" "$dir/$1"
    echo "made    secrets/$1"
  fi
}

secret postgres-password 'openssl rand -hex 32'
# keyId:base64 of 32 bytes (src/servers/codec: AES-256-GCM).
secret payload-encryption-keys 'printf "key1:%s\n" "$(openssl rand -base64 32)"'
secret codec-server-token 'openssl rand -hex 32'
secret supplier-app-secret 'openssl rand -hex 32'
secret grafana-admin-password 'openssl rand -hex 24'
# The Web UI's login (the nginx in front of it): the password for people, its hash for nginx.
secret web-ui-password 'openssl rand -hex 24'
secret web-ui-htpasswd "printf 'operator:%s\n' \"\$(openssl passwd -apr1 \"\$(cat '$dir/web-ui-password')\")\""
chmod 644 "$dir"/*
echo "The Web UI asks for user 'operator' and the password in $dir/web-ui-password;"
echo "the codec server's /login for the token in $dir/codec-server-token."
