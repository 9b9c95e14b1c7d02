"""`syncadvisor server`: a language server (LSP 3.17 over standard input and output).

Its protocol library is an optional extra (`pip install 'syncadvisor[server]'`): the
static core never imports it.
"""
from __future__ import annotations

import sys
from typing import Optional

INSTALL_HINT = "the language server needs its extra: pip install 'syncadvisor[server]'"


def main(jobs: Optional[int] = None) -> int:
    try:
        from . import lsp
    except ImportError as exc:  # pygls or lsprotocol missing
        print(f"syncadvisor: error: {INSTALL_HINT} ({exc})", file=sys.stderr)
        return 2
    return lsp.main(jobs)
