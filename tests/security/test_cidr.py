"""``kraftwire.security.cidr`` beside Kafka 4.4's ``CidrUtils`` itself (``tests/kafka/CidrOracle.java``): the same
CIDR hosts accepted or refused alike, refused with the same message (what CreateAcls' INVALID_REQUEST carries), and
the same client addresses inside each block — over chosen cases (the kinds Kafka's ``CidrUtilsTest`` covers: IPv4
and IPv6 blocks, their edges, /0 and full-length prefixes, malformed notations, addresses of the other family) and
seeded random ones. The chosen answers are also asserted by value, so the rules read without a JVM."""

from __future__ import annotations

import os
import random
import tempfile

import pytest
from harness.kafka import run_java

from kraftwire.security import cidr

VALID = ["10.0.0.0/8", "10.1.2.3/8", "192.168.1.0/24", "0.0.0.0/0", "1.2.3.4/32", "010.000.000.000/8",
         "10.0.0.0/31", "2001:db8::/32", "::1/128", "::/0", "2001:db8::1/64", "[::1]/128", "2001:db8::/0032",
         "fe80::1%1/64"]
#: malformed -> CidrUtils' message (Kafka 4.4 at 4.4-IV1 answers "Invalid CIDR notation '<host>': <message>")
INVALID = {
    "10.0.0.0/33": "Value [33] not in range [0,32]",
    "256.0.0.0/8": "Value [256] not in range [0,255]",
    "10.0.0/8": "Could not parse [10.0.0/8]",
    "10.0.0.0/": "Could not parse [10.0.0.0/]",
    "10.0.0.0/008": "Could not parse [10.0.0.0/008]",
    "10.0.0.0/-1": "Could not parse [10.0.0.0/-1]",
    " 10.0.0.0/8": "Could not parse [ 10.0.0.0/8]",
    "10.0.0.0/8/8": "Could not parse [10.0.0.0/8/8]",
    "a/b": "Could not parse [a/b]",
    "2001:db8::/129": "Could not parse [2001:db8::/129] - prefix length must be between 0 and 128",
    "2001:db8::/-1": "Could not parse [2001:db8::/-1] - prefix length must be between 0 and 128",
    "2001:db8::/": "Could not parse [2001:db8::/] - invalid prefix length",
    "2001:db8::/99999999999": "Could not parse [2001:db8::/99999999999] - invalid prefix length",
    "2001:zz8::/32": "Could not parse [2001:zz8::]",
    "1:2:3:4:5:6:7:8:9/64": "Could not parse [1:2:3:4:5:6:7:8:9]",
    "::ffff:10.0.0.0/104": "Could not parse [::ffff:10.0.0.0] - not an IPv6 address",
    "2001:db8::": "Could not parse [2001:db8::] - missing prefix length",
}
#: (client address, block) -> in it?
RANGES = {
    ("10.1.2.3", "10.0.0.0/8"): True, ("11.0.0.1", "10.0.0.0/8"): False,
    ("10.0.0.0", "10.0.0.0/8"): True, ("10.255.255.255", "10.0.0.0/8"): True,  # network and broadcast count
    ("0.0.0.0", "0.0.0.0/0"): False, ("1.2.3.4", "0.0.0.0/0"): True,  # 0.0.0.0 is in no block
    ("1.2.3.4", "1.2.3.4/32"): True, ("1.2.3.5", "1.2.3.4/32"): False, ("10.0.0.1", "10.0.0.0/31"): True,
    ("01.2.3.4", "1.0.0.0/8"): True, ("127.0.0.1", "127.0.0.0/8"): True,
    ("::1", "::1/128"): True, ("0:0:0:0:0:0:0:1", "::1/128"): True, ("2001:db8::5", "2001:db8::/32"): True,
    ("2001:db9::5", "2001:db8::/32"): False, ("2001:DB8::1", "2001:db8::/32"): True,
    ("2001:db8:0:0:1::", "2001:db8::1/64"): True, ("fe80::1%1", "fe80::/10"): True,
    ("10.1.2.3", "::/0"): False, ("::1", "10.0.0.0/8"): False, ("::ffff:10.1.2.3", "10.0.0.0/8"): False,
    ("localhost", "10.0.0.0/8"): False, ("10.1.2.3", "10.1.2.3"): False, ("10.1.2.3", "*"): False,
    ("10.1.2.3", "256.0.0.0/8"): False,  # a malformed block holds nothing
}


@pytest.mark.parametrize("block", VALID)
def test_valid_blocks_are_accepted(block):
    assert cidr.validate(block) is None


@pytest.mark.parametrize("block, message", INVALID.items())
def test_malformed_blocks_are_refused_with_kafkas_message(block, message):
    assert cidr.validate(block) == message


@pytest.mark.parametrize("address, block", RANGES)
def test_an_address_is_in_a_block_as_kafka_says(address, block):
    assert cidr.in_range(address, block) is RANGES[address, block]


def _random_block(rng: random.Random) -> str:
    if rng.random() < 0.5:
        octets = [str(rng.choice([0, 1, 10, 127, 192, 255, 256, rng.randrange(256)])) for _ in range(4)]
        return ".".join(octets[:rng.choice([3, 4, 4, 4])]) + "/" + str(rng.choice([0, 8, 16, 24, 31, 32, 33,
                                                                                    rng.randrange(40)]))
    groups = [rng.choice(["", "0", "db8", "2001", "ffff", "fe80", f"{rng.randrange(65536):x}"])
              for _ in range(rng.randrange(2, 9))]
    return ":".join(groups) + "::/" + str(rng.choice([0, 1, 32, 64, 127, 128, 129, rng.randrange(140)]))


def _random_address(rng: random.Random, block: str) -> str:
    base = block.split("/", 1)[0]
    if "%" in base:
        return rng.choice(["fe80::2%1", "fe80::2%1:5", "fe81::1%1"])
    if ":" in base:
        return base.rstrip(":") + f":{rng.randrange(65536):x}" if rng.random() < 0.7 else f"{rng.randrange(65536):x}::1"
    parts = base.split(".")
    parts[-1] = str(rng.randrange(256))
    if rng.random() < 0.3:
        parts[0] = str(rng.randrange(256))
    return ".".join(parts)


def _hex(text: str) -> str:
    return text.encode("utf-8").hex()


def test_kafkas_cidr_utils_agrees_on_chosen_and_seeded_random_cases():
    rng = random.Random(1276)
    blocks = VALID + list(INVALID) + [_random_block(rng) for _ in range(400)]
    pairs = list(RANGES) + [(_random_address(rng, b), b) for b in blocks for _ in range(2)]
    queries = [f"V {_hex(b)}" for b in blocks] + [f"R {_hex(a)} {_hex(b)}" for a, b in pairs]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "queries")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(queries) + "\n")
        answers = run_java("CidrOracle.java", path).splitlines()
    assert len(answers) == len(queries)
    kafka_validate = answers[:len(blocks)]
    ours_validate = ["OK" if cidr.validate(b) is None else "ERR " + _hex(cidr.validate(b)) for b in blocks]
    assert [(b, k) for b, k, o in zip(blocks, kafka_validate, ours_validate) if k != o] == []
    kafka_ranges = answers[len(blocks):]
    ours_ranges = [str(cidr.in_range(a, b)).lower() for a, b in pairs]
    assert [(p, k) for p, k, o in zip(pairs, kafka_ranges, ours_ranges) if k != o] == []
    # the seeded cases reach every kind of answer
    assert {"OK", "ERR"} <= {k.split(" ")[0] for k in kafka_validate} and {"true", "false"} <= set(kafka_ranges)
