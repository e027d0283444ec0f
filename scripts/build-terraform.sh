#!/usr/bin/env bash
# Build a pinned Terraform CLI from the Go module proxy (no releases.hashicorp.com
# download needed). Usage: scripts/build-terraform.sh [OUTPUT] (default bin/terraform).
#
# The module zip of github.com/hashicorp/terraform lacks Terraform's nested
# modules: the remote-state backends azurerm, consul, cos, gcs, kubernetes,
# oss, pg, s3 and oci, and internal/legacy. Its go.mod replaces them with
# directories that are not in the zip, and the proxy serves none of them, so
# building the module as downloaded fails ("replacement directory ... does not
# exist"). Only internal/backend/init/init.go imports those backends, so this
# script builds a copy of the module without them: their imports and
# registrations in init.go and their replace/require lines in go.mod are
# dropped. What remains is the real CLI with the local, http, inmem, remote
# and cloud backends. The provider's tests only ever use local state, so
# nothing they touch differs from a release build.
set -euo pipefail

TERRAFORM_VERSION="${TERRAFORM_VERSION:-1.15.0}"
GO="${GO:-go}"
out="${1:-bin/terraform}"
mkdir -p "$(dirname "$out")"
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"

echo ">> building Terraform v${TERRAFORM_VERSION} from the Go module proxy into ${out}" >&2
echo ">> this takes several minutes (about 7 on 2 cores) the first time" >&2

# Run outside any module so the download never touches this repo's go.sum.
tmp="$(mktemp -d)"
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
dir="$(cd "$tmp" && GOFLAGS=-mod=mod "$GO" mod download -json "github.com/hashicorp/terraform@v${TERRAFORM_VERSION}" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
	echo "could not download github.com/hashicorp/terraform@v${TERRAFORM_VERSION}" >&2
	exit 1
fi

# The module cache is read-only: edit a copy.
src="$tmp/terraform"
cp -R "$dir" "$src"
chmod -R u+w "$src"

# The nested modules the zip lacks: local replacements whose directory is
# missing. Everything below is derived from them, not from a fixed list, so a
# new version that adds or drops one needs no change here.
missing=()
while read -r path target; do
	[ -d "$src/$target" ] || missing+=("$path")
done < <(sed -n 's/^replace[[:space:]]\{1,\}\([^[:space:]]\{1,\}\)[[:space:]]\{1,\}=>[[:space:]]\{1,\}\(\.\/[^[:space:]]\{1,\}\)[[:space:]]*$/\1 \2/p' "$src/go.mod")
if [ "${#missing[@]}" -eq 0 ]; then
	echo ">> no missing nested modules: building the module as downloaded" >&2
fi

init="$src/internal/backend/init/init.go"
for path in "${missing[@]}"; do
	(cd "$src" && "$GO" mod edit -dropreplace="$path" -droprequire="$path")
	# Any importer but init.go would need a by-hand look: refuse to guess.
	importers="$(grep -rl --include='*.go' --exclude='*_test.go' "\"${path}\"" "$src" || true)"
	for f in $importers; do
		if [ "$f" != "$init" ]; then
			echo "$path is imported by ${f#"$src"/}, not only by init.go: update this script" >&2
			exit 1
		fi
	done
	[ -n "$importers" ] || continue
	alias="$(sed -n "s/^[[:space:]]*\([A-Za-z0-9_]\{1,\}\)[[:space:]]\{1,\}\"${path//\//\\/}\"$/\1/p" "$init")"
	if [ -z "$alias" ]; then
		echo "cannot find the import name of $path in init.go: update this script" >&2
		exit 1
	fi
	# The import line and the registration line(s) that use it (no sed -i:
	# BSD and GNU sed disagree on it).
	sed -e "\#\"${path}\"#d" -e "/[^A-Za-z0-9_]${alias}\./d" "$init" >"$init.new"
	mv "$init.new" "$init"
done
# version.dev=no drops the "-dev" suffix, as Terraform's own release build does.
(cd "$src" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false "$GO" build -trimpath \
	-ldflags "-s -w -X github.com/hashicorp/terraform/version.dev=no" \
	-o "$out.tmp" .)
# Check that the binary runs before it takes its place, and print only the
# first line of its version. Not `version | head -1`: under pipefail the CLI
# gets SIGPIPE writing its second line once head has exited, and the script
# failed (exit 141) after a successful build.
version="$(TF_CLI_CONFIG_FILE=/dev/null CHECKPOINT_DISABLE=1 "$out.tmp" version)"
mv "$out.tmp" "$out"
printf '%s\n' "${version%%$'\n'*}"
