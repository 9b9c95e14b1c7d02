"""Stage 1, one file at a time: its text -> a `FileResult` (the model from Python's
`ast`, or a TFS900 finding). Independent of every other file, so it is cached and may
run in another process."""
from __future__ import annotations

import ast
import traceback
import warnings
from typing import List, Optional, Sequence, Tuple

from ..records import field, record
from ..collector import collector_paused
from ..config import Settings
from ..files import UnreadableSource, module_name, reads_as_itself
from ..findings import ERROR, Finding
from ..model import tfapi
from ..model.facts import FileModel
from ..notebook import is_notebook, is_virtual, parse_cells, unread_cells
from ..suppress import may_name_tfs_codes
from .prefilter import may_hold_a_finding

PARSE_ERROR = "TFS900"
PARSE_ERROR_NAME = "parse-error"


@record
class FileResult:
    path: str
    model: Optional[FileModel] = None
    errors: List[Finding] = field(default_factory=list)  # TFS900: unreadable, unparsable
    internal_error: bool = False
    size: int = 0  # characters in the text analysed
    # The text may hold a noqa comment naming a TFS code: stage 2 reads its noqa comments
    # even where no rule found anything, to report the codes nothing used (TFS901).
    tfs_noqa: bool = False


def tool_error(path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    return Finding(path, line, column, line, column, PARSE_ERROR, PARSE_ERROR_NAME, ERROR, message)


def internal_error(path: str, exc: BaseException) -> Finding:
    """A TFS900 for a bug of this tool, with where it happened."""
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    origin = f" at {where.filename.rsplit('/', 1)[-1]}:{where.lineno}" if where else ""
    return tool_error(path, f"internal error while checking this file: "
                            f"{type(exc).__name__}: {exc}{origin} (please report it)")


def rewrites_for(settings: Settings) -> Sequence[Tuple[str, str]]:
    return tfapi.prefix_rewrites(
        tfapi.tf_keras_is_keras3(settings.target_tensorflow, settings.keras),
        tfapi.keras_is_keras3(settings.target_tensorflow, settings.keras_package))


def analyze_text(text: str, path: str, settings: Settings, module: Optional[str] = None,
                 tree: Optional[ast.Module] = None, prefilter: bool = True) -> FileResult:
    """Stage 1 for one decoded source text: its model from Python's `ast` (`tree`, when
    the caller has parsed `text` already, as flake8 has), or a TFS900 finding. Without
    `prefilter`, modelled even where it cannot hold a finding: a module that other
    modules import names from (`Run`'s second pass)."""
    result = FileResult(path, size=len(text), tfs_noqa=may_name_tfs_codes(text))
    cells = is_notebook(path) and is_virtual(text)  # a notebook's cells, parsed one by one
    if cells:
        result.errors.extend(unread_cells(text, path))  # the cells IPython cannot run
    if prefilter and not may_hold_a_finding(text):
        return result
    with collector_paused():
        if tree is None:
            tree = parse_cells(text, path, result.errors) if cells else _parse(text, path, result)
            if tree is None:
                return result
        from ..model.builder import build_model

        try:
            result.model = build_model(tree, path, module or module_name(path),
                                       rewrites_for(settings), text)
        except RecursionError:
            result.errors.append(tool_error(path, "cannot analyse: the code is nested too deeply"))
        except Exception as exc:  # noqa: BLE001 - one file's bug must not stop the run
            result.errors.append(internal_error(path, exc))
            result.internal_error = True
    return result


def _parse(text: str, path: str, result: FileResult) -> Optional[ast.Module]:
    """Python's tree of `text`; None, with a TFS900 finding in `result`, where Python
    cannot parse it (its own message and position)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings are not the user's question
            return ast.parse(text)
    except SyntaxError as exc:
        result.errors.append(tool_error(path, f"cannot parse: {exc.msg}", exc.lineno or 1,
                                        max(1, exc.offset or 1)))
    except ValueError as exc:  # NUL bytes (before Python 3.12)
        result.errors.append(tool_error(path, f"cannot parse: {exc}"))
    except (RecursionError, MemoryError):
        result.errors.append(tool_error(path, "cannot parse: too deeply nested for Python's "
                                              "own parser"))
    return None


def unreadable(path: str, exc: UnreadableSource) -> FileResult:
    result = FileResult(path)
    result.errors.append(tool_error(path, str(exc)))
    return result


def died(path: str, process: str) -> FileResult:
    """The result for a file whose `process` died while it was checked."""
    result = FileResult(path)
    result.errors.append(tool_error(path, f"internal error while checking this file: {process} "
                                    "died (a crash in native code, or out of memory) "
                                    "(please report it)"))
    result.internal_error = True
    return result


def analyze_bytes(path: str, data: bytes, settings: Settings) -> FileResult:
    """Stage 1 for a file's bytes: decode (notebooks: their code cells), then analyse."""
    from ..inputs import Input

    try:
        text = Input(path, data).text
    except UnreadableSource as exc:
        return unreadable(path, exc)
    return analyze_text(text, path, settings)


def analyze_unmodelled(path: str, data: bytes, settings: Settings) -> FileResult:
    """Stage 1 for a file the prefilter drops: nothing to model, only whether it can be
    read. Plain ASCII without NUL bytes or a coding line decodes as itself, so that is
    all there is to know, without decoding it (most files of a large tree are here)."""
    if reads_as_itself(data) and not is_notebook(path):
        return FileResult(path, size=len(data),
                          tfs_noqa=b"noqa" in data.lower() and may_name_tfs_codes(data.decode()))
    return analyze_bytes(path, data, settings)
