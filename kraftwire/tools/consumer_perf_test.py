"""``kraftwire consumer-perf-test --bootstrap-server HOST:PORT (--topic T | --include REGEX) --num-records N``:
Kafka's ``kafka-consumer-perf-test.sh`` (ConsumerPerformance), its options and its output, on confluent-kafka
(librdkafka) with Kafka consumer keys passed through (``producer_perf_test``'s mapping), as the other perf tools.

It consumes N records as group ``--group`` (``perf-consumer-<random>`` by default) from the earliest offset
(``--from-latest``: the latest) and prints Kafka's header and one line::

    start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms,
    fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
    2026-01-01 10:00:00:000, 2026-01-01 10:00:03:500, 0.0954, 0.0273, 100, 28.5714, 3000, 500, 0.1907, 200.0000

(MB of keys and values; rebalance time from the subscription to the first assignment; fetch time the rest). With
``--show-detailed-stats`` a line per ``--reporting-interval`` instead (``time, threadId, data.consumed.in.MB, ...``:
the totals so far, the rates over the interval). When
``--timeout`` ms pass without a record it stops early with Kafka's warning. ``--messages`` is the deprecated name.
"""

from __future__ import annotations

import argparse
import datetime
import random
import re
import time

HEADER = ("start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, "
          "fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
DETAILED_HEADER = ("time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, "
                   "fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
#: Java's SimpleDateFormat letters this takes in --date-format, as strftime (SSS: milliseconds)
_JAVA_DATE = {"yyyy": "%Y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%M", "ss": "%S"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bootstrap-server", required=True, help="the server(s) to connect to")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--topic", help="the topic to consume from")
    which.add_argument("--include", help="a regular expression of the topics to consume from")
    count = parser.add_mutually_exclusive_group(required=True)
    count.add_argument("--num-records", type=int, help="the number of records to consume")
    count.add_argument("--messages", type=int, help="(deprecated) as --num-records")
    parser.add_argument("--group", default=f"perf-consumer-{random.randrange(100000)}", help="the group id")
    parser.add_argument("--fetch-size", type=int, default=1024 * 1024, help="bytes to fetch per request")
    parser.add_argument("--from-latest", action="store_true", help="start at the latest offset (no committed one)")
    parser.add_argument("--socket-buffer-size", type=int, default=2 * 1024 * 1024, help="the TCP receive size")
    parser.add_argument("--command-config", "--consumer.config", dest="command_config", metavar="FILE",
                        help="consumer properties file")
    parser.add_argument("--command-property", action="append", default=[], metavar="KEY=VALUE",
                        help="a consumer property (repeatable)")
    parser.add_argument("--timeout", type=int, default=10000, help="ms without a record before stopping")
    parser.add_argument("--print-metrics", action="store_true", help="print librdkafka statistics at the end")
    parser.add_argument("--show-detailed-stats", action="store_true", help="a line per reporting interval")
    parser.add_argument("--reporting-interval", type=int, default=5000, help="ms between detailed lines")
    parser.add_argument("--date-format", default="yyyy-MM-dd HH:mm:ss:SSS", help="Java SimpleDateFormat pattern")
    parser.add_argument("--hide-header", action="store_true", help="print no header line")


def java_date(pattern: str, epoch_ms: int) -> str:
    """``epoch_ms`` in local time as Java's SimpleDateFormat writes ``pattern`` (its common letters)."""
    when = datetime.datetime.fromtimestamp(epoch_ms / 1000)
    return f"{epoch_ms % 1000:03d}".join(
        when.strftime(re.sub(r"yyyy|MM|dd|HH|mm|ss", lambda m: _JAVA_DATE[m.group(0)], piece.replace("%", "%%")))
        for piece in pattern.split("SSS"))


def rates(nbytes: int, count: int, elapsed_ms: int, join_ms: int) -> str:
    """Kafka's figures after the time columns."""
    mb = nbytes / 1024 / 1024
    secs = max(elapsed_ms, 1) / 1000
    fetch_ms = elapsed_ms - join_ms
    fetch_s = fetch_ms / 1000
    return (f"{mb:.4f}, {mb / secs:.4f}, {count}, {count / secs:.4f}, {join_ms}, {fetch_ms}, "
            f"{(mb / fetch_s) if fetch_s > 0 else 0:.4f}, {(count / fetch_s) if fetch_s > 0 else 0:.4f}")


def progress(nbytes: int, count: int, last: tuple[int, int, int], at: int, join_ms: int) -> str:
    """A detailed line's figures after its time: thread 0, the totals, and the rates since ``last`` ((time, count,
    bytes) of the previous line), the fetch rates without the interval's rebalance time, as Kafka's tool."""
    elapsed = max(at - last[0], 1)
    interval_mb = (nbytes - last[2]) / 1024 / 1024
    interval_count = count - last[1]
    fetch_ms = elapsed - join_ms
    fetch = (f"{interval_mb * 1000 / fetch_ms:.4f}, {interval_count * 1000 / fetch_ms:.4f}" if fetch_ms > 0
             else "0.0000, 0.0000")
    return (f"0, {nbytes / 1024 / 1024:.4f}, {interval_mb * 1000 / elapsed:.4f}, {count}, "
            f"{interval_count * 1000 / elapsed:.4f}, {join_ms}, {fetch_ms}, {fetch}")


def run(args: argparse.Namespace) -> int:
    from kraftwire.tools import command_config as cc

    if args.messages is not None:
        print("Warning: --messages is deprecated. Use --num-records instead.")
    wanted = args.num_records if args.num_records is not None else args.messages
    try:
        from confluent_kafka import Consumer
    except ImportError:  # pragma: no cover - a dependency
        raise SystemExit("this tool needs confluent-kafka (pip install confluent-kafka)") from None
    props = cc.read_client_properties(args.command_config) if args.command_config else {}
    props.update(cc.parse_pairs(args.command_property))
    props.update({"bootstrap.servers": args.bootstrap_server, "group.id": args.group,
                  "auto.offset.reset": "latest" if args.from_latest else "earliest",
                  "enable.auto.commit": props.get("enable.auto.commit", "true")})
    conf = cc.librdkafka_config(props)
    conf.setdefault("fetch.max.bytes", str(max(args.fetch_size, 1)))
    stats_json: list[str] = []
    if args.print_metrics:
        conf.setdefault("statistics.interval.ms", "5000")
        conf["stats_cb"] = stats_json.append
    consumer = Consumer(conf)
    now_ms = lambda: int(time.time() * 1000)  # noqa: E731 - a wall clock, as Kafka's figures use
    start = now_ms()
    assigned_at: list[int] = []
    consumer.subscribe([args.topic] if args.topic else [f"^{args.include}"],
                       on_assign=lambda c, parts: assigned_at or assigned_at.append(now_ms()))
    if not args.hide_header:
        print(DETAILED_HEADER if args.show_detailed_stats else HEADER)
    count = nbytes = 0
    last_record = time.monotonic()
    report = (start, 0, 0)  # (time, count, bytes) of the last detailed line
    try:
        while count < wanted:
            msg = consumer.poll(0.1)
            if msg is None or msg.error() is not None:
                if (time.monotonic() - last_record) * 1000 > args.timeout:
                    print(f"WARNING: Exiting before consuming the expected number of records: timeout "
                          f"({args.timeout} ms) exceeded. You can use the --timeout option to increase the timeout.")
                    break
                continue
            last_record = time.monotonic()
            count += 1
            nbytes += len(msg.key() or b"") + len(msg.value() or b"")
            if args.show_detailed_stats and now_ms() - report[0] >= args.reporting_interval:
                at = now_ms()
                join = max(0, assigned_at[0] - report[0]) if assigned_at and assigned_at[0] > report[0] else 0
                print(f"{java_date(args.date_format, at)}, {progress(nbytes, count, report, at, join)}")
                report = (at, count, nbytes)
    finally:
        end = now_ms()
        consumer.close()
    join = (assigned_at[0] - start) if assigned_at else 0
    if not args.show_detailed_stats:
        print(f"{java_date(args.date_format, start)}, {java_date(args.date_format, end)}, "
              f"{rates(nbytes, count, end - start, join)}")
    if args.print_metrics and stats_json:
        print(stats_json[-1])
    return 0
