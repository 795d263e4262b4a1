#!/usr/bin/env bash
# Fetch Apache Kafka's jars (the version pinned in tests/kafka/pom.xml) and their dependencies from Maven Central into
# a cache outside the tree: ${KRAFTWIRE_KAFKA_HOME:-~/.cache/kraftwire/kafka-<version>}/libs. Given another pom
# (tests/kafka/connect/pom.xml, tests/kafka/spark/pom.xml), its jars go to ~/.cache/kraftwire/<its cache.name>/libs.
# Maven fails when an artifact cannot be had, and the script with it. The stamp .complete holds the pom's checksum: a
# second run with the same pom fetches nothing, one with a changed pom (an artifact added) fetches again. The new set
# is gathered beside the old one and swapped in whole, under a lock, so a test still running on the old jars is not
# left with a half-filled directory. Prints the libs directory.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd -P)"
pom="$(realpath "${1:-$here/pom.xml}")"
if [ "$pom" = "$here/pom.xml" ]; then
    version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom")
    home="${KRAFTWIRE_KAFKA_HOME:-$HOME/.cache/kraftwire/kafka-$version}"
else
    name=$(sed -n 's:.*<cache.name>\(.*\)</cache.name>.*:\1:p' "$pom")
    [ -n "$name" ] || { echo "fetch.sh: $pom names no <cache.name>" >&2; exit 1; }
    home="$HOME/.cache/kraftwire/$name"
fi
libs="$home/libs"
stamp=$(sha256sum "$pom" | cut -d' ' -f1)
if [ "$(cat "$home/.complete" 2>/dev/null)" = "$stamp" ] && [ -d "$libs" ]; then
    echo "$libs"
    exit 0
fi
mkdir -p "$home"
exec 9>"$home/.lock"
flock 9  # one fetch at a time per cache; a run that waited finds the other's jars current
if [ "$(cat "$home/.complete" 2>/dev/null)" = "$stamp" ] && [ -d "$libs" ]; then
    echo "$libs"
    exit 0
fi
command -v mvn >/dev/null || { echo "fetch.sh: Maven (mvn) is required to fetch the jars of $pom" >&2; exit 1; }
fresh=$(mktemp -d "$home/libs.new.XXXXXX")
trap 'rm -rf "$fresh"' EXIT
mvn -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory="$fresh" -DincludeScope=runtime >&2
compgen -G "$fresh/*.jar" >/dev/null || { echo "fetch.sh: no jar arrived for $pom" >&2; exit 1; }
rm -f "$home/.complete"
old="$home/libs.old.$$"
[ ! -e "$libs" ] || mv "$libs" "$old"
mv "$fresh" "$libs"
rm -rf "$old"
echo "$stamp" > "$home/.complete"
echo "$libs"
