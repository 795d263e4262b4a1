#!/usr/bin/env bash
# Fetch Apache Kafka's jars (the version pinned in tests/kafka/pom.xml) and their dependencies from Maven Central into
# a cache outside the tree: ${KRAFTWIRE_KAFKA_HOME:-~/.cache/kraftwire/kafka-<version>}/libs. A second run finds the
# cache complete and fetches nothing. Prints the libs directory.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$here/pom.xml")
home="${KRAFTWIRE_KAFKA_HOME:-$HOME/.cache/kraftwire/kafka-$version}"
libs="$home/libs"
if [ -f "$home/.complete" ] && [ -f "$libs/kafka_2.13-$version.jar" ]; then
    echo "$libs"
    exit 0
fi
command -v mvn >/dev/null || { echo "fetch.sh: Maven (mvn) is required to fetch Kafka $version" >&2; exit 1; }
rm -rf "$libs" "$home/.complete"
mkdir -p "$libs"
mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies -DoutputDirectory="$libs" -DincludeScope=runtime >&2
[ -f "$libs/kafka_2.13-$version.jar" ] || { echo "fetch.sh: kafka_2.13-$version.jar did not arrive" >&2; exit 1; }
touch "$home/.complete"
echo "$libs"
