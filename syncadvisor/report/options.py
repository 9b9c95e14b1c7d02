"""What a format may need beyond the findings: colour, the fix flags, the source lines."""
from __future__ import annotations

from typing import Optional

from ..records import record
from .source import Sources
from .style import PLAIN, Style


@record(frozen=True)
class Options:
    style: Style = PLAIN  # colour, for the text formats only
    unsafe_fixes: bool = False  # --unsafe-fixes: --fix applies the unsafe fixes too
    sources: Optional[Sources] = None  # the reported files' lines (`--format full`)


DEFAULT = Options()
