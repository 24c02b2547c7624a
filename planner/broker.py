"""The `filesystem://` broker transport, made safe against bad message files.

kombu's filesystem transport moves a message file out of the queue folder and parses it; an empty file (a
publisher killed between creating and writing it, a full disk) or a malformed one raises inside the worker's
consumer, which restarts the worker, and the next file of the same kind does it again. This transport takes a
file only when no publisher holds its lock, and moves a file it cannot parse to the quarantine folder (with a
warning naming it) instead of raising, so one bad file costs one log line, not a crash loop.

It is registered for the `filesystem://` scheme by config.celery. No Django here: kombu loads it in every
process that talks to the broker, and its folders come from the transport options (settings).
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from pathlib import Path
from queue import Empty

from kombu.transport import filesystem
from kombu.utils.json import loads

logger = logging.getLogger(__name__)

# An empty file younger than this may be a publisher between open() and lock(): leave it for now.
EMPTY_FILE_GRACE_S = 5.0


class QuarantiningChannel(filesystem.Channel):
    """kombu's filesystem channel whose `_get` skips files being written and quarantines unreadable ones."""

    @property
    def quarantine_folder(self) -> Path:
        default = Path(self.data_folder_in).parent.parent / "broker-quarantine"
        return Path(self.transport_options.get("quarantine_folder", default))

    def _get(self, queue):
        suffix = f"{queue}.msg"
        for name in sorted(os.listdir(self.data_folder_in)):
            if name.partition(".")[2] != suffix:
                continue
            payload = take_message_file(Path(self.data_folder_in) / name, Path(self.processed_folder))
            if payload is None:
                continue
            message = parse_or_quarantine(name, payload, Path(self.processed_folder), self.quarantine_folder)
            if message is not None:
                return message
        raise Empty()


class QuarantiningTransport(filesystem.Transport):
    Channel = QuarantiningChannel


def take_message_file(path: Path, claim_folder: Path, now: float | None = None) -> bytes | None:
    """Claim one message file and return its bytes, or None when it is not ours to take (yet).

    The claim is a rename into `claim_folder` (same file system, so atomic: of two consumers only one wins).
    A file a publisher still holds locked, or an empty one younger than EMPTY_FILE_GRACE_S, is left alone.
    The claimed copy stays in `claim_folder` until `parse_or_quarantine` deletes or quarantines it.
    """
    try:
        handle = open(path, "rb")  # noqa: SIM115 (the lock must be held across the rename below)
    except OSError:
        return None  # taken by another consumer meanwhile
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None  # a publisher is still writing it
        stat = os.fstat(handle.fileno())
        age_s = (now if now is not None else time.time()) - stat.st_mtime
        if stat.st_size == 0 and age_s < EMPTY_FILE_GRACE_S:
            return None
        claim_folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            os.rename(path, claim_folder / path.name)
        except OSError:
            return None
        return handle.read()


def parse_or_quarantine(name: str, payload: bytes, claim_folder: Path, quarantine_folder: Path) -> dict | None:
    """Decode a claimed message; an empty or malformed one is moved to the quarantine folder (returns None)."""
    claimed = claim_folder / name
    reason = ""
    message = None
    if not payload.strip():
        reason = "empty file"
    else:
        try:
            message = loads(payload.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            reason = f"not a JSON message ({type(exc).__name__}: {exc})"
        else:
            if not isinstance(message, dict):
                reason, message = "not a JSON object", None
    if message is not None:
        claimed.unlink(missing_ok=True)
        return message
    quarantine_folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        os.replace(claimed, quarantine_folder / name)
    except OSError:
        logger.exception("could not quarantine broker file %s", name)
    logger.warning("quarantined broker message file %s: %s (moved to %s)", name, reason, quarantine_folder)
    return None
