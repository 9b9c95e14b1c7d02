"""SARIF 2.1.0, for GitHub code scanning: rule metadata, results with regions and fixes."""
from __future__ import annotations

import json
import os
from typing import Dict, List, TextIO
from urllib.parse import quote

from .. import __version__
from ..findings import ERROR, INFO, WARNING, Finding
from .options import DEFAULT, Options
from ..rules import all_rules

LEVELS = {ERROR: "error", WARNING: "warning", INFO: "note"}
SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
HOME = "https://pypi.org/project/syncadvisor/"


def _uri(path: str) -> str:
    rel = os.path.relpath(path) if os.path.isabs(path) else path
    if rel.startswith(".."):
        return "file://" + quote(os.path.abspath(path).replace(os.sep, "/"))
    return quote(rel.replace(os.sep, "/"))


def _region(line: int, column: int, end_line: int, end_column: int) -> Dict[str, int]:
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}


def _result(f: Finding, rule_index: Dict[str, int]) -> dict:
    location = {"physicalLocation": {
        "artifactLocation": {"uri": _uri(f.path), "uriBaseId": "%SRCROOT%"},
        "region": _region(f.line, f.column, f.end_line, f.end_column),
    }}
    result = {
        "ruleId": f.code,
        "ruleIndex": rule_index[f.code],
        "level": LEVELS[f.severity],
        "message": {"text": f.message},
        "locations": [location],
    }
    if f.cell is not None:
        result["properties"] = {"notebookCell": f.cell}
    if f.fix is not None and f.cell is None:
        result["fixes"] = [{
            "description": {"text": f"{f.fix.message} ({f.fix.applicability} fix)"},
            "artifactChanges": [{
                "artifactLocation": {"uri": _uri(f.path), "uriBaseId": "%SRCROOT%"},
                "replacements": [{
                    "deletedRegion": _region(e.line, e.column, e.end_line, e.end_column),
                    "insertedContent": {"text": e.content},
                } for e in f.fix.edits],
            }],
        }]
    return result


def _help_uri(code: str) -> Dict[str, str]:
    """{"helpUri": ...}: the rule's page as installed with the package (a file: URI),
    where the tool that wrote the report runs; the project has no website to point at.
    `help` holds the same text, for viewers that cannot open the file."""
    from ..rules.docs import installed_page

    page = installed_page(code)
    return {"helpUri": page.as_uri()} if page is not None else {}


def document(findings: List[Finding]) -> dict:
    rules = list(all_rules())
    rule_index = {r.code: i for i, r in enumerate(rules)}
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "syncadvisor",
                "version": __version__,
                "informationUri": HOME,
                "rules": [{
                    "id": r.code,
                    "name": r.name,
                    "shortDescription": {"text": r.summary},
                    "fullDescription": {"text": r.sections().get("What it does", r.summary)},
                    "help": {"text": r.documentation(), "markdown": r.documentation()},
                    **_help_uri(r.code),
                    "defaultConfiguration": {"level": LEVELS[r.severity]},
                    "properties": {"fix": r.fix_availability or "none"},
                } for r in rules],
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": _srcroot()}},
            "results": [_result(f, rule_index) for f in findings],
        }],
    }


def _srcroot() -> str:
    root = os.getcwd().replace(os.sep, "/")
    return "file://" + quote(root if root.endswith("/") else root + "/")


def write(findings: List[Finding], out: TextIO, options: Options = DEFAULT) -> None:
    json.dump(document(findings), out, indent=2, ensure_ascii=False)
    out.write("\n")
