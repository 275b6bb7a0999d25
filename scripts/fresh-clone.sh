#!/usr/bin/env bash
# A new user's first five minutes: clone the repository into an empty folder (nothing beside
# it: no ../shared, no ../anything) and run the README's Quick start commands there, exactly as
# the README writes them. The commands are read from the README's first ```sh block under
# "## Quick start", so the README and this check cannot drift apart.
#
#   bash scripts/fresh-clone.sh
#
# It clones the committed HEAD (uncommitted changes are not part of a clone, as for any user).
# CARGO_TARGET_DIR points at this checkout's target/ so dependencies are not rebuilt; the
# workspace's own crates are compiled afresh from the clone's sources. FRESH_CLONE_TARGET_DIR
# overrides it.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

# The Quick start block: lines between the first "```sh" after "## Quick start" and its "```".
mapfile -t COMMANDS < <(awk '
    /^## Quick start/ { in_section = 1; next }
    in_section && /^## / { exit }
    in_section && /^```sh/ { in_block = 1; next }
    in_block && /^```/ { exit }
    in_block && NF { print }
' README.md)
if [[ ${#COMMANDS[@]} -ne 2 ]]; then
    echo "fresh-clone: README's Quick start should hold exactly two commands, found ${#COMMANDS[@]}:" >&2
    printf '  %s\n' "${COMMANDS[@]}" >&2
    exit 1
fi

EMPTY=$(mktemp -d)
trap 'rm -rf "$EMPTY"' EXIT
git clone --quiet --no-local "$ROOT" "$EMPTY/repo"
echo "==> fresh-clone: cloned $(git -C "$EMPTY/repo" rev-parse --short HEAD) into $EMPTY/repo; beside it: $(ls -A "$EMPTY" | tr '\n' ' ')"

export CARGO_TARGET_DIR=${FRESH_CLONE_TARGET_DIR:-$ROOT/target}
for command in "${COMMANDS[@]}"; do
    echo "==> fresh-clone: $command"
    (cd "$EMPTY/repo" && bash -euo pipefail -c "$command")
done
echo "==> fresh-clone: both Quick start commands passed in a clone with nothing beside it"
