#!/usr/bin/env bash
# Build a pinned OpenTofu CLI from the Go module proxy (no GitHub release
# download needed). Usage: scripts/build-tofu.sh [OUTPUT] (default bin/tofu).
# `go install module@version` refuses OpenTofu's replace directive, so the
# module is downloaded into the module cache and built from there.
set -euo pipefail

TOFU_VERSION="${TOFU_VERSION:-1.12.6}"
GO="${GO:-go}"
out="${1:-bin/tofu}"
mkdir -p "$(dirname "$out")"
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"

echo ">> building OpenTofu v${TOFU_VERSION} from the Go module proxy into ${out}" >&2
echo ">> this takes several minutes (about 7 on 2 cores) the first time" >&2

# Run outside any module so the download never touches this repo's go.sum.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
dir="$(cd "$tmp" && GOFLAGS=-mod=mod "$GO" mod download -json "github.com/opentofu/opentofu@v${TOFU_VERSION}" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
	echo "could not download github.com/opentofu/opentofu@v${TOFU_VERSION}" >&2
	exit 1
fi

# version.dev=no drops the "-dev" suffix, as OpenTofu's own release build does.
(cd "$dir" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false "$GO" build -trimpath \
	-ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" \
	-o "$out.tmp" ./cmd/tofu)
# Check that the binary runs before it takes its place, and print only the
# first line of its version. Not `version | head -1`: under pipefail the CLI
# gets SIGPIPE writing its second line once head has exited, and the script
# failed (exit 141) after a successful build.
version="$(TF_CLI_CONFIG_FILE=/dev/null "$out.tmp" version)"
mv "$out.tmp" "$out"
printf '%s\n' "${version%%$'\n'*}"
