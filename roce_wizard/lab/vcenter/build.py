"""Building the lab's vCenter simulator (lab/vcsim, govmomi v0.46.3) with Go, cached per source hash."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from roce_wizard.lab.vcenter.config import BINARY, MIN_GO, SOURCE_FILES, VCSIM_SOURCE, VCenterUnavailable, log

# ------------------------------------------------------------------------------ building


def default_cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("roce-wizard")) / "vcsim"


def go_version(go: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, timeout=60,
                             check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.match(r"go(\d+)\.(\d+)", out.strip())
    return (int(m[1]), int(m[2])) if m else None


def source_hash(go_version_text: str = "") -> str:
    digest = hashlib.sha256(go_version_text.encode())
    for name in SOURCE_FILES:
        digest.update(name.encode() + b"\0" + (VCSIM_SOURCE / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def go_problem(go: str | None = None) -> str | None:
    """Why this machine cannot build the simulator (no Go, Go too old), or None."""
    go = go or shutil.which("go")
    if go is None:
        return f"Go is not installed (the lab's vCenter needs Go >= {MIN_GO[0]}.{MIN_GO[1]})"
    version = go_version(go)
    if version is None or version < (1, 21):  # 1.21+ can fetch the 1.22 toolchain itself (GOTOOLCHAIN=auto)
        found = ".".join(map(str, version)) if version else "of an unknown version"
        return f"Go {found} is too old (the lab's vCenter needs Go >= {MIN_GO[0]}.{MIN_GO[1]}: govmomi v0.46.3)"
    return None


def build_vcsim(cache_dir: Path | None = None, *, go: str | None = None, timeout: float = 900) -> Path | None:
    """The simulator binary, built once per source hash; None without a usable Go (`go_problem`).

    A build that fails for another reason raises ``VCenterUnavailable`` with the compiler's output.
    """
    go = go or shutil.which("go")
    problem = go_problem(go)
    if problem is not None or go is None:
        log.info("%s: the lab runs without vCenter", problem)
        return None
    version = go_version(go) or MIN_GO
    cache_dir = Path(cache_dir or default_cache_dir())
    cache_dir.mkdir(parents=True, exist_ok=True)
    binary = cache_dir / f"{BINARY}-{source_hash(f'go{version[0]}.{version[1]}')}"
    if binary.exists():
        return binary
    with _build_lock(cache_dir):
        if binary.exists():  # another process built it while we waited
            return binary
        tmp = binary.with_name(f"{binary.name}.{os.getpid()}.tmp")
        cmd = [go, "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", str(tmp), "."]
        log.warning("building the lab's vCenter simulator into %s (first use: about a minute, ~1.2 GB of memory)",
                    cache_dir)
        try:
            result = subprocess.run(cmd, cwd=VCSIM_SOURCE, capture_output=True, text=True, timeout=timeout,
                                    env={**os.environ, "CGO_ENABLED": "0"}, check=False)
        except subprocess.TimeoutExpired as exc:
            raise VCenterUnavailable(f"building the vCenter simulator took over {timeout:.0f} s") from exc
        if result.returncode != 0:
            tmp.unlink(missing_ok=True)
            tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-20:])
            raise VCenterUnavailable(f"building the vCenter simulator failed ({' '.join(cmd)}):\n{tail}")
        os.replace(tmp, binary)
        for old in cache_dir.glob(f"{BINARY}-*"):  # builds of earlier sources
            if re.fullmatch(rf"{BINARY}-[0-9a-f]{{16}}", old.name) and old != binary:
                old.unlink(missing_ok=True)
    return binary


@contextlib.contextmanager
def _build_lock(cache_dir: Path):
    try:
        import fcntl
    except ImportError:  # not POSIX: builds are rare enough to race
        yield
        return
    with open(cache_dir / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
