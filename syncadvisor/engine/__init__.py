"""Files -> findings, in one direction:

    prefilter   which files can hold a finding at all (a few words in their text)
    analyze     stage 1, one file: text -> FileResult (its model from Python's `ast`)
    parallel    stage 1 for many files, in worker processes (the only code that knows them)
    check       stage 2, the whole run: link the models, run the rules, apply `# noqa`
    run         `Run`: one check of files or texts, with the cache; fixes on request

Front-ends (the command, the flake8 plugin, `api`) use `Run` and nothing else here.
"""
from .analyze import FileResult
from .check import RunResult
from .run import FixOutcome, Run

__all__ = ["Run", "RunResult", "FixOutcome", "FileResult"]
