#!/usr/bin/env bash
# Fetch Apache Kafka's jars (the artifacts and the version tests/kafka/pom.xml pins) and their dependencies from Maven
# Central into a cache outside the tree: ${KRAFTWIRE_KAFKA_HOME:-~/.cache/kraftwire/kafka-<version>}/libs. The cache's
# .complete stamp holds the hash of the pom it was fetched for: a second run finds it current and fetches nothing, a
# changed pom fetches afresh. The new jars are gathered beside the old ones and swapped in whole, under a lock, so a
# test running meanwhile never sees half a classpath. Prints the libs directory.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$here/pom.xml")
home="${KRAFTWIRE_KAFKA_HOME:-$HOME/.cache/kraftwire/kafka-$version}"
libs="$home/libs"
pom_hash=$(sha256sum "$here/pom.xml" | cut -d' ' -f1)
current() { [ "$(cat "$home/.complete" 2>/dev/null)" = "$pom_hash" ] && [ -f "$libs/kafka_2.13-$version.jar" ]; }
if current; then
    echo "$libs"
    exit 0
fi
mkdir -p "$home"
exec 9>"$home/.lock"
flock 9
if current; then  # another run fetched them while this one waited for the lock
    echo "$libs"
    exit 0
fi
command -v mvn >/dev/null || { echo "fetch.sh: Maven (mvn) is required to fetch Kafka $version" >&2; exit 1; }
fresh="$home/libs.new"
rm -rf "$fresh" "$home/libs.old"
mkdir -p "$fresh"
mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies -DoutputDirectory="$fresh" -DincludeScope=runtime >&2
[ -f "$fresh/kafka_2.13-$version.jar" ] || { echo "fetch.sh: kafka_2.13-$version.jar did not arrive" >&2; exit 1; }
rm -f "$home/.complete"
if [ -d "$libs" ]; then mv "$libs" "$home/libs.old"; fi
mv "$fresh" "$libs"
rm -rf "$home/libs.old"
echo "$pom_hash" > "$home/.complete"
echo "$libs"
