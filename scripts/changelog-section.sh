#!/usr/bin/env bash
# Print the CHANGELOG.md section of one version: the lines between its
# "## …" heading and the next one (or the version-link definitions that end
# a Keep a Changelog file), without the heading, trimmed of blank lines.
# The release workflow passes the result to goreleaser as release notes.
#
#   scripts/changelog-section.sh VERSION                the section of VERSION (v0.1.0 and 0.1.0 alike)
#   scripts/changelog-section.sh --unreleased [VERSION] VERSION's section if there is one, else "Unreleased"
#
# Headings matched: "## 0.1.0", "## v0.1.0", "## [0.1.0]", each optionally
# followed by " - 2026-01-31" or " (January 31, 2026)"; "## Unreleased" and
# "## [Unreleased]". Exits 1, saying why on stderr, when the section is
# missing or empty: a release is never published with no notes.
# CHANGELOG (environment) names another file than the repository's.
set -euo pipefail

usage() {
	echo "usage: $0 VERSION | $0 --unreleased [VERSION]" >&2
	exit 2
}

fallback=false
if [[ ${1:-} == --unreleased ]]; then
	fallback=true
	shift
fi
[[ $# -le 1 ]] || usage
version=${1:-}
version=${version#v}
if ! $fallback; then
	[[ -n $version ]] || usage
	if [[ ${version,,} == unreleased ]]; then
		echo "$0: Unreleased is not a version: use --unreleased" >&2
		exit 2
	fi
fi

changelog=${CHANGELOG:-$(cd "$(dirname "$0")/.." && pwd)/CHANGELOG.md}
[[ -r $changelog ]] || { echo "$0: cannot read $changelog" >&2; exit 1; }

# section NAME prints NAME's section (NAME is a version without its "v", or
# "Unreleased"); it prints nothing when there is no such heading.
section() {
	awk -v want="$1" '
		function heading_name(line,    s) {
			s = substr(line, 4)
			sub(/^[ \t]+/, "", s)
			sub(/^\[/, "", s)
			sub(/[] \t(].*$/, "", s)
			if (tolower(s) == "unreleased") return "Unreleased"
			sub(/^v/, "", s)
			return s
		}
		/^## / {
			if (found) exit
			if (heading_name($0) == want) found = 1
			next
		}
		found && /^\[[^]]+\]: / { exit }
		found { lines[++n] = $0 }
		END {
			first = 1; last = n
			while (first <= n && lines[first] ~ /^[ \t]*$/) first++
			while (last >= first && lines[last] ~ /^[ \t]*$/) last--
			for (i = first; i <= last; i++) print lines[i]
		}
	' "$changelog"
}

notes=""
if [[ -n $version ]]; then
	notes=$(section "$version")
fi
if [[ -z $notes ]] && $fallback; then
	notes=$(section Unreleased)
	if [[ -z $notes ]]; then
		echo "$0: no section (or an empty one) for ${version:+$version or }Unreleased in $changelog" >&2
		exit 1
	fi
fi
if [[ -z $notes ]]; then
	echo "$0: no section (or an empty one) for $version in $changelog: add \"## $version\" with the release's notes" >&2
	exit 1
fi
printf '%s\n' "$notes"
