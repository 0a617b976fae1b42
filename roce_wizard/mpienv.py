"""`policy.mpi_env`: the UCX variables a site adds to RW603's MPI run ("UCX_K=V UCX_K2=V2").

They reach a remote shell (`mpirun -x`), so each word must be `UCX_NAME=value` with a plain value.
The inventory checks them at load (file:line:field); the validate stage parses them again.
"""

from __future__ import annotations

import re

ENV_WORD = re.compile(r"^UCX_[A-Z0-9_]{1,60}=[A-Za-z0-9_.:,^-]{0,120}$")
EXPECTED = "space-separated UCX_NAME=value words (a value of letters, digits and _ . : , ^ -), e.g. UCX_TLS=rc,sm"


def bad_words(text: str) -> list[str]:
    return [w for w in text.split() if not ENV_WORD.match(w)]


def parse_env(text: str) -> dict[str, str]:
    out = {}
    for word in text.split():
        if not ENV_WORD.match(word):
            raise ValueError(f"policy.mpi_env: {word!r} is not UCX_NAME=value")
        k, _, v = word.partition("=")
        out[k] = v
    return out
