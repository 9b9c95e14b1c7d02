"""Where the tests' data lives."""
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FIXTURES = TESTS / "fixtures"
SNIPPETS = TESTS / "runtime" / "snippets"
