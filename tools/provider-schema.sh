#!/usr/bin/env bash
# Usage: tools/provider-schema.sh TERRAFORM_OR_TOFU OUT.json
#
# Writes `providers schema -json` of the provider built from this tree to
# OUT.json, for `tfplugindocs generate/validate --providers-schema`. The CLI
# must be Terraform 1.14 or later: older ones export no actions, list
# resources or identities (checked below). Offline
# and independent of $PATH: the provider is built here, installed into a
# local plugin directory (init -plugin-dir never asks a registry), and the
# CLI is the one given. The provider is installed as hashicorp/prime, the
# address tfplugindocs looks the schema up by (it does the same when it
# builds the provider itself); OpenTofu's key is renamed to match.
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 TERRAFORM_OR_TOFU OUT.json" >&2
	exit 2
fi
cli=$1
out=$2
go=${GO:-go}
root=$(cd "$(dirname "$0")/.." && pwd)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

platform="$("$go" env GOOS)_$("$go" env GOARCH)"
bin="$tmp/terraform-provider-prime"
"$go" build -C "$root" -o "$bin" .
for host in registry.terraform.io registry.opentofu.org; do
	dir="$tmp/plugins/$host/hashicorp/prime/0.0.1/$platform"
	mkdir -p "$dir"
	cp "$bin" "$dir/"
done

printf 'provider "prime" {}\n' >"$tmp/main.tf"
(
	cd "$tmp"
	export CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1
	"$cli" init -input=false -backend=false -plugin-dir=plugins >/dev/null
	"$cli" providers schema -json
) | sed 's#"registry\.opentofu\.org/hashicorp/prime"#"registry.terraform.io/hashicorp/prime"#' >"$out"

if ! grep -q '"registry.terraform.io/hashicorp/prime"' "$out"; then
	echo "$0: no schema for the prime provider in the output of $cli providers schema -json" >&2
	exit 1
fi

# Actions and list resources are only in the export of Terraform 1.14 and
# later (resource identities of 1.12 and later); an older CLI (or OpenTofu)
# leaves them out without a word, and the docs would silently lose their
# pages. The provider has both, so refuse such an export.
for key in action_schemas list_resource_schemas resource_identity_schemas; do
	if ! grep -q "\"$key\"" "$out"; then
		echo "$0: $cli exported no $key: the docs need Terraform 1.14 or later ($("$cli" version | head -1))" >&2
		exit 1
	fi
done
