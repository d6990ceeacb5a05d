#!/usr/bin/env bash
# One version everywhere: CMakeLists.txt's project(VERSION) is the source; the latest released version in
# CHANGELOG.md, CITATION.cff's version and analysis/pyproject.toml's must equal it. Also checks that the licence
# files and the citation's required parts are there. Usage: release_files_test.sh SOURCE_DIR
set -euo pipefail
cd "$1"
fail() { echo "release_files_test: FAILED: $*" >&2; exit 1; }

cmake_version=$(sed -n 's/^project(omnilearn VERSION \([0-9][0-9.]*\).*/\1/p' CMakeLists.txt)
[ -n "$cmake_version" ] || fail "no project(omnilearn VERSION x.y.z) in CMakeLists.txt"
changelog_version=$(sed -n 's/^## \[\([0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\)\].*/\1/p' CHANGELOG.md | head -n 1)
citation_version=$(sed -n 's/^version: *"\{0,1\}\([0-9.]*\)"\{0,1\} *$/\1/p' CITATION.cff)
python_version=$(sed -n 's/^version = "\([0-9.]*\)"$/\1/p' analysis/pyproject.toml)
echo "CMakeLists.txt $cmake_version, CHANGELOG.md $changelog_version, CITATION.cff $citation_version," \
     "analysis/pyproject.toml $python_version"
[ "$changelog_version" = "$cmake_version" ] || fail "CHANGELOG.md's latest release is '$changelog_version'"
[ "$citation_version" = "$cmake_version" ] || fail "CITATION.cff's version is '$citation_version'"
[ "$python_version" = "$cmake_version" ] || fail "analysis/pyproject.toml's version is '$python_version'"
grep -q '^## \[Unreleased\]' CHANGELOG.md || fail "CHANGELOG.md has no [Unreleased] section"

grep -q '^cff-version: 1.2.0$' CITATION.cff || fail "CITATION.cff is not cff-version 1.2.0"
for key in '^title:' '^authors:' '^message:' '^preferred-citation:' '^license: Apache-2.0$'; do
  grep -q "$key" CITATION.cff || fail "CITATION.cff lacks $key"
done
grep -q 'Apache License' LICENSE && grep -q 'Version 2.0' LICENSE || fail "LICENSE is not the Apache License 2.0"
grep -q 'traces/data' NOTICE || fail "NOTICE does not name the derived traces' own licences"
if /usr/bin/python3 -c "import yaml" 2>/dev/null; then  # the file must at least be valid YAML
  /usr/bin/python3 -c "import sys, yaml; d = yaml.safe_load(open('CITATION.cff')); \
sys.exit(0 if d['preferred-citation']['authors'][0]['family-names'] == 'Tyagi' else 1)" ||
    fail "CITATION.cff is not valid YAML or does not cite Tyagi and Sharma"
fi
echo "release_files_test: ok"
