"""`--format junit`: JUnit XML, as ruff writes it, for CI systems that show test reports.

One `testsuite` per file with findings, one `testcase` per finding with a `failure`
holding the message; a run with no findings is one passing testcase, so the document
is always a valid report. Text that XML 1.0 cannot hold at all (most control
characters, which a message can quote from the source) is written as U+FFFD.
"""
from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Dict, List, TextIO

from ..findings import Finding
from .options import DEFAULT, Options

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

NAME = "syncadvisor"
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)


def _counts(element: "ET.Element", tests: int, failures: int) -> None:
    element.set("tests", str(tests))
    element.set("skipped", "0")
    element.set("failures", str(failures))
    element.set("errors", "0")


def document(findings: List[Finding]) -> "ET.Element":
    import xml.etree.ElementTree as ET  # (only when this format is asked for)

    root = ET.Element("testsuites", name=NAME)
    _counts(root, max(len(findings), 1), len(findings))
    if not findings:
        suite = ET.SubElement(root, "testsuite", name=NAME)
        _counts(suite, 1, 0)
        suite.set("package", NAME)
        ET.SubElement(suite, "testcase", name="No findings", classname=NAME)
        return root
    by_path: Dict[str, List[Finding]] = {}
    for f in findings:  # (in the report's order: by path, then position)
        by_path.setdefault(f.path, []).append(f)
    for path, found in by_path.items():
        suite = ET.SubElement(root, "testsuite", name=_text(path))
        _counts(suite, len(found), len(found))
        suite.set("package", NAME)
        classname = _text(os.path.splitext(path)[0])
        for f in found:
            case = ET.SubElement(suite, "testcase", name=f"{NAME}.{f.code}", classname=classname,
                                 line=str(f.line), column=str(f.column))
            properties = ET.SubElement(case, "properties")
            ET.SubElement(properties, "property", name="severity", value=f.severity)
            where = f"line {f.line}, col {f.column}"
            if f.cell is not None:
                ET.SubElement(properties, "property", name="cell", value=str(f.cell))
                where = f"cell {f.cell}, {where}"
            failure = ET.SubElement(case, "failure", message=_text(f.message))
            failure.text = _text(f"{where}, {f.message}")
    return root


def write(findings: List[Finding], out: TextIO, options: Options = DEFAULT) -> None:
    import xml.etree.ElementTree as ET

    root = document(findings)
    ET.indent(root, space="    ")
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(root, encoding="unicode"))
    out.write("\n")
