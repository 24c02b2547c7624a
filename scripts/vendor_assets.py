"""Fetch the page's chart library, plotly.js's basic bundle, into var/vendor/ (served as static/vendor/).

The plan page draws only scatter and bar traces (planner/outputs/chart_plotly.py), so it loads
plotly.js-basic-dist-min (scatter, bar, pie; about 1.1 MB) rather than the full 4.8 MB bundle the plotly Python
package carries. The version is the plotly.js inside the pinned plotly package (7.1.0 carries plotly.js 4.1.1), so
the figures the server builds match the library that draws them.

The package comes from the npm registry through `npm pack` (npm's own cache under var/, never $HOME), and the
tarball must match the sha512 integrity pinned below (the registry's `dist.integrity`); the extracted file must
match its own pinned sha512 too. Any mismatch stops with an error and leaves nothing behind. Run by `make install`
and the image build; idempotent: a present file with the pinned digest is left alone, without calling npm.
Generated, so it lives with the other runtime files under var/ and is not committed.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "var" / "vendor"  # settings.VENDOR_DIR
NPM_CACHE = ROOT / "var" / "npm-cache"

PACKAGE = "plotly.js-basic-dist-min"
VERSION = "4.1.1"
# `npm view plotly.js-basic-dist-min@4.1.1 dist.integrity`
TARBALL_INTEGRITY = "sha512-1oNF8PeQx2hv/y7tqEVWKD3JGwn/MGEMQ8mL9HUwsaqG9FGy/OU5FHUHvzqbqxN4mnwZGI9abTiE775C4kkjMQ=="
MEMBER = "package/plotly-basic.min.js"
TARGET = VENDOR / "plotly-basic.min.js"
# sha512 of MEMBER inside that tarball (the same encoding as npm's integrity strings).
FILE_INTEGRITY = "sha512-orZ6OgVLrRp8vSfEJ9XXGswEzLgmW4nqH1ja1cWJRPqwAkyU0GcrM42aDvIcJjrK9EmGWyVZ3tpMmHXbCrrIaA=="


class VendorError(RuntimeError):
    """The download or a digest check failed: nothing was written."""


def integrity(data: bytes) -> str:
    """npm's Subresource-Integrity form of a sha512 digest: "sha512-" + base64 of the digest."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def _npm_pack(destination: Path) -> bytes:
    """The package's tarball as the registry serves it, through npm (no lifecycle scripts run for `pack`)."""
    NPM_CACHE.mkdir(parents=True, exist_ok=True)
    command = [
        "npm",
        "pack",
        f"{PACKAGE}@{VERSION}",
        "--cache",
        str(NPM_CACHE),
        "--pack-destination",
        str(destination),
        "--silent",
        "--no-fund",
        "--no-audit",
        "--ignore-scripts",
    ]
    env = {**os.environ, "npm_config_update_notifier": "false"}
    try:
        subprocess.run(command, check=True, capture_output=True, text=True, env=env, timeout=300)
    except FileNotFoundError as error:
        raise VendorError("npm is not installed: scripts/system-deps.sh installs it") from error
    except subprocess.CalledProcessError as error:
        raise VendorError(f"npm pack {PACKAGE}@{VERSION} failed: {error.stderr.strip()[-500:]}") from error
    tarballs = list(destination.glob("*.tgz"))
    if len(tarballs) != 1:
        raise VendorError(f"npm pack left {len(tarballs)} tarballs, expected one")
    return tarballs[0].read_bytes()


def extract(tarball: bytes) -> bytes:
    """The bundle's bytes from a verified tarball (only the one member is read; nothing is extracted to disk)."""
    if integrity(tarball) != TARBALL_INTEGRITY:
        raise VendorError(f"{PACKAGE}@{VERSION}: the tarball's sha512 does not match the pinned integrity")
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        member = archive.getmember(MEMBER)
        handle = archive.extractfile(member) if member.isfile() else None
        if handle is None:
            raise VendorError(f"{MEMBER} is not a regular file in the tarball")
        data = handle.read()
    if integrity(data) != FILE_INTEGRITY:
        raise VendorError(f"{MEMBER}: its sha512 does not match the pinned digest")
    return data


def present() -> bool:
    """The bundle is already in place with the pinned digest."""
    return TARGET.is_file() and integrity(TARGET.read_bytes()) == FILE_INTEGRITY


def main() -> int:
    if present():
        return 0
    VENDOR.mkdir(parents=True, exist_ok=True)
    try:
        with tempfile.TemporaryDirectory(prefix="vendor-", dir=VENDOR.parent) as folder:
            data = extract(_npm_pack(Path(folder)))
            staged = Path(folder) / TARGET.name
            staged.write_bytes(data)
            staged.chmod(0o644)
            os.replace(staged, TARGET)  # atomic: the server sees the old file or the whole new one
    except VendorError as error:
        print(f"vendor_assets: {error}", file=sys.stderr)
        return 1
    stale = VENDOR / "plotly.min.js"  # the full bundle copied by earlier versions of this script
    stale.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
