"""What a check produces: findings, each with an optional fix made of text edits.

Lines and columns here are 1-based, as every output format shows them; end
positions are exclusive.
"""
from __future__ import annotations

from .records import field, record
from typing import Optional, Tuple

ERROR = "error"
WARNING = "warning"
INFO = "info"
SEVERITIES = (ERROR, WARNING, INFO)

SAFE = "safe"
UNSAFE = "unsafe"


@record(frozen=True)
class Edit:
    line: int
    column: int
    end_line: int
    end_column: int
    content: str

    def to_json(self) -> dict:
        return {"line": self.line, "column": self.column, "end_line": self.end_line,
                "end_column": self.end_column, "content": self.content}


@record(frozen=True)
class Fix:
    applicability: str  # SAFE or UNSAFE
    message: str
    edits: Tuple[Edit, ...]

    def to_json(self) -> dict:
        return {"applicability": self.applicability, "message": self.message,
                "edits": [e.to_json() for e in self.edits]}


@record(frozen=True)
class Related:
    """Another place that a finding's message names ("`.assign(...)` at line 48"), kept
    so that a report can show that line. `label` says what is there; `column` is None
    where only the line is known (a strategy's creation); columns are 1-based, the end
    exclusive, as a finding's. In a notebook's finding, `line` is in `cell`."""

    path: str
    line: int
    label: str
    column: Optional[int] = None
    end_line: Optional[int] = None
    end_column: Optional[int] = None
    cell: Optional[int] = None


@record(frozen=True)
class Finding:
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    name: str
    severity: str
    message: str
    fix: Optional[Fix] = None
    cell: Optional[int] = field(default=None, compare=False)  # notebooks: 1-based cell
    # What the message names elsewhere, in the order it names them: only `--format full`
    # shows them (the message itself says the same in words), so JSON leaves them out.
    related: Tuple[Related, ...] = field(default=(), compare=False)

    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.line, self.column, self.code)

    def to_json(self) -> dict:
        data = {
            "path": self.path, "line": self.line, "column": self.column,
            "end_line": self.end_line, "end_column": self.end_column, "code": self.code,
            "name": self.name, "severity": self.severity, "message": self.message,
            "fix": self.fix.to_json() if self.fix else None,
        }
        if self.cell is not None:
            data["cell"] = self.cell
        return data
