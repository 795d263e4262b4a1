#!/usr/bin/env bash
# librdkafka's share consumer (KIP-932 preview) against kraftwire: builds librdkafka from its source into
# ~/.cache/kraftwire/librdkafka-<ref>, runs its share tests (0170-0190) against a kraftwire node with share groups on,
# then a C librdkafka share consumer and a Java KafkaShareConsumer in one share group (see librdkafka_share.py, which
# this runs; its options pass through, e.g. --target kafka for the same run against Apache Kafka 4.4).
#
# Needs: a C compiler, make, git, tar and libzstd's headers (apt-get install -y build-essential git libzstd-dev;
# optionally libssl-dev zlib1g-dev), Java 17+ and Kafka 4.4's jars (tests/kafka/fetch.sh fetches them), and
# librdkafka's git directory (default /work/.mirror/confluentinc+librdkafka/repo, or --source DIR: a git dir or an
# unpacked source tree).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
python="${PYTHON:-}"
if [ -z "$python" ]; then
    if [ -x "$root/.venv/bin/python" ]; then python="$root/.venv/bin/python"; else python=python3; fi
fi
for tool in cc make git tar java; do
    if ! command -v "$tool" > /dev/null; then
        echo "librdkafka_share.sh: $tool is missing (apt-get install -y build-essential git libzstd-dev" \
             "default-jdk-headless)" >&2
        exit 2
    fi
done
cd "$root"
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" exec "$python" tests/interop/librdkafka_share.py "$@"
