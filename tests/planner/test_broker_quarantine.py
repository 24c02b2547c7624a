"""Malformed or empty `filesystem://` broker files are quarantined, not a consumer crash; files still being
written are left alone; good messages around them are delivered."""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

import pytest
from kombu import Connection
from kombu.transport import resolve_transport

import config.celery  # noqa: F401  (registers the transport for the filesystem:// scheme)
from planner.broker import EMPTY_FILE_GRACE_S, QuarantiningTransport, take_message_file


@pytest.fixture
def folders(tmp_path) -> dict[str, Path]:
    paths = {name: tmp_path / name for name in ("queue", "processed", "control", "quarantine")}
    for path in paths.values():
        path.mkdir()
    return paths


@pytest.fixture
def channel(folders):
    options = {
        "data_folder_in": str(folders["queue"]),
        "data_folder_out": str(folders["queue"]),
        "processed_folder": str(folders["processed"]),
        "control_folder": str(folders["control"]),
        "quarantine_folder": str(folders["quarantine"]),
    }
    with Connection("filesystem://", transport_options=options) as conn:
        yield conn.default_channel


def _old(path: Path) -> Path:
    """Make a file look older than the grace period an empty file gets."""
    past = time.time() - EMPTY_FILE_GRACE_S - 1
    os.utime(path, (past, past))
    return path


def test_filesystem_scheme_uses_the_quarantining_transport(channel):
    assert resolve_transport("filesystem") is QuarantiningTransport
    assert isinstance(channel.connection, QuarantiningTransport)


def test_malformed_and_empty_files_are_quarantined_and_good_messages_still_delivered(channel, folders):
    (folders["queue"] / "0_aaa.celery.msg").write_bytes(b"")
    (folders["queue"] / "0_bbb.celery.msg").write_bytes(b'{"body": "trunc')
    _old(folders["queue"] / "0_aaa.celery.msg")
    channel._put("celery", {"body": "good", "properties": {}})  # named by a clock, so it sorts after "0_"

    message = channel._get("celery")
    assert message["body"] == "good"
    assert sorted(p.name for p in folders["quarantine"].iterdir()) == ["0_aaa.celery.msg", "0_bbb.celery.msg"]
    assert list(folders["queue"].iterdir()) == [] and list(folders["processed"].iterdir()) == []


def test_only_bad_files_left_means_empty_not_a_crash(channel, folders):
    (folders["queue"] / "1_ccc.celery.msg").write_bytes(b"\xff\xfe not utf-8")
    (folders["queue"] / "2_ddd.celery.msg").write_bytes(json.dumps([1, 2]).encode())
    from queue import Empty

    with pytest.raises(Empty):
        channel._get("celery")
    assert len(list(folders["quarantine"].iterdir())) == 2


def test_a_fresh_empty_file_is_left_for_its_publisher(channel, folders):
    fresh = folders["queue"] / "1_eee.celery.msg"
    fresh.write_bytes(b"")
    from queue import Empty

    with pytest.raises(Empty):
        channel._get("celery")
    assert fresh.exists() and list(folders["quarantine"].iterdir()) == []


def test_a_file_its_publisher_holds_locked_is_not_taken(folders):
    path = folders["queue"] / "1_fff.celery.msg"
    with open(path, "wb") as publisher:
        fcntl.flock(publisher, fcntl.LOCK_EX)
        publisher.write(b'{"body": "half')
        assert take_message_file(path, folders["processed"]) is None
        assert path.exists()
    _old(path)
    assert take_message_file(path, folders["processed"]) == b'{"body": "half'
    assert not path.exists() and (folders["processed"] / path.name).exists()


def test_messages_for_other_queues_are_not_touched(channel, folders):
    other = folders["queue"] / "1_ggg.other.msg"
    other.write_bytes(b"garbage")
    from queue import Empty

    with pytest.raises(Empty):
        channel._get("celery")
    assert other.exists() and list(folders["quarantine"].iterdir()) == []
