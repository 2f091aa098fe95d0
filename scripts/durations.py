"""Per test file, how long its tests took (setup, call and teardown), from pytest's
``--durations`` report on standard input; prints tests/durations.txt (tests/conftest.py starts
the slowest files first)::

    .venv/bin/pytest -n 3 --maxschedchunk 1 -m "not alone" --durations=0 > run.txt
    .venv/bin/python scripts/durations.py < run.txt > tests/durations.txt
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict

HEADER = """\
# How long each test file's tests take, in seconds (setup, call and teardown), slowest first:
# tests/conftest.py starts these files first, so that the parallel run (scripts/test.sh) ends on
# short tests instead of waiting on a long one. Refresh with scripts/durations.py (its docstring).
"""


def main() -> None:
    totals: dict[str, float] = defaultdict(float)
    for line in sys.stdin:
        found = re.match(r"\s*([\d.]+)s (?:call|setup|teardown)\s+(\S+?)::", line)
        if found:
            totals[found.group(2)] += float(found.group(1))
    sys.stdout.write(HEADER)
    for path, seconds in sorted(totals.items(), key=lambda kv: -kv[1]):
        if seconds >= 1.0:
            sys.stdout.write(f"{seconds:.0f} {path}\n")


if __name__ == "__main__":
    main()
