"""``kraftwire storage random-uuid`` and ``kraftwire storage format``."""

from __future__ import annotations

import re

import pytest

from kraftwire.cli import main
from kraftwire.errors import StorageNotFormattedError
from kraftwire.ids import uuid_from_base64
from kraftwire.log.meta_properties import ensure_formatted, read_meta_properties

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"


def test_random_uuid(capsys):
    seen = set()
    for _ in range(20):
        assert main(["storage", "random-uuid"]) == 0
        out = capsys.readouterr().out.strip()
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", out) and not out.startswith("-")
        uuid_from_base64(out)
        seen.add(out)
    assert len(seen) == 20


def write_config(tmp_path, node_id=1, extra=""):
    cfg = tmp_path / f"node{node_id}.properties"
    cfg.write_text(
        f"node.id={node_id}\nlisteners=PLAINTEXT://localhost:9092\ncontroller.listener.names=PLAINTEXT\n"
        f"controller.quorum.voters=1@localhost:9092\nlog.dirs={tmp_path}/logs-a,{tmp_path}/logs-b\n{extra}"
    )
    return str(cfg)


def test_format_writes_meta_properties_in_every_dir(tmp_path, capsys):
    cfg = write_config(tmp_path)
    with pytest.raises(StorageNotFormattedError, match="not formatted|does not exist"):
        ensure_formatted(str(tmp_path / "logs-a"))
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg]) == 0
    out = capsys.readouterr().out
    assert out == f"Formatting {tmp_path}/logs-a\nFormatting {tmp_path}/logs-b\n"
    a = read_meta_properties(str(tmp_path / "logs-a"))
    b = read_meta_properties(str(tmp_path / "logs-b"))
    assert (a.version, a.cluster_id, a.node_id) == (1, CLUSTER, 1)
    assert a.directory_id is not None and b.directory_id is not None and a.directory_id != b.directory_id
    text = (tmp_path / "logs-a" / "meta.properties").read_text().splitlines()
    assert text[0] == "#" and text[1].startswith("#")
    assert text[2:] == [f"cluster.id={CLUSTER}", f"directory.id={text[3].split('=')[1]}", "node.id=1", "version=1"]
    assert ensure_formatted(str(tmp_path / "logs-a"), node_id=1) == a


def test_format_refuses_to_reformat(tmp_path, capsys):
    cfg = write_config(tmp_path)
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg]) == 0
    before = (tmp_path / "logs-a" / "meta.properties").read_bytes()
    capsys.readouterr()
    assert main(["storage", "format", "-t", "AAAAAAAAAAAAAAAAAAAAAg", "-c", cfg]) == 1
    err = capsys.readouterr().err
    assert "already formatted" in err and "--ignore-formatted" in err
    assert (tmp_path / "logs-a" / "meta.properties").read_bytes() == before
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg, "--ignore-formatted"]) == 0
    assert capsys.readouterr().out == "All of the log directories are already formatted.\n"


def test_format_ignore_formatted_formats_the_others(tmp_path, capsys):
    cfg = write_config(tmp_path)
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg]) == 0
    (tmp_path / "logs-b" / "meta.properties").unlink()
    capsys.readouterr()
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg]) == 1  # logs-a is formatted: nothing written
    assert not (tmp_path / "logs-b" / "meta.properties").exists()
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg, "-g"]) == 0
    assert capsys.readouterr().out.endswith(f"Formatting {tmp_path}/logs-b\n")


def test_format_metadata_log_dir(tmp_path, capsys):
    cfg = write_config(tmp_path, extra=f"metadata.log.dir={tmp_path}/meta\n")
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"Formatting {tmp_path}/meta"


@pytest.mark.parametrize(
    "args, message",
    [
        (["-t", "not-a-uuid"], "does not appear to be a valid UUID"),
        (["-t", CLUSTER, "--standalone"], "not supported yet"),
        (["-t", CLUSTER, "--initial-controllers", "1@h:1:AAAAAAAAAAAAAAAAAAAAAg"], "not supported yet"),
    ],
)
def test_format_errors(tmp_path, capsys, args, message):
    cfg = write_config(tmp_path)
    assert main(["storage", "format", "-c", cfg, *args]) == 1
    assert message in capsys.readouterr().err
    assert not (tmp_path / "logs-a").exists()


def test_format_bad_config_value_names_the_key(tmp_path, capsys):
    cfg = write_config(tmp_path, node_id=1, extra="metadata.log.segment.bytes=12\n")
    assert main(["storage", "format", "-t", CLUSTER, "-c", cfg]) == 1
    assert "metadata.log.segment.bytes" in capsys.readouterr().err
    cfg2 = tmp_path / "nonode.properties"
    cfg2.write_text(f"log.dirs={tmp_path}/x\n")
    assert main(["storage", "format", "-t", CLUSTER, "-c", str(cfg2)]) == 1
    assert "node.id" in capsys.readouterr().err


def test_help_mentions_dynamic_quorum_flags_as_coming_later(capsys):
    with pytest.raises(SystemExit):
        main(["storage", "format", "--help"])
    out = capsys.readouterr().out
    assert "--standalone" in out and "--initial-controllers" in out and "coming later" in out
