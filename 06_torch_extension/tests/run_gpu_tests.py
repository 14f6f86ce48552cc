"""Runs the GPU tests (pytest -m gpu), or exits 77 without a GPU so that CTest reports them *skipped*.

pytest itself would report skipped tests as a passing run: ctest would then show the GPU tests as
passed on a machine that has no GPU. Exiting 77 first keeps "skipped" honest.
"""

import sys
from pathlib import Path

import pytest

CHAPTER = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(CHAPTER / "demos"))

from timing import require_gpu  # noqa: E402

if __name__ == "__main__":
    require_gpu()
    sys.exit(pytest.main(["-c", str(CHAPTER / "pytest.ini"), "-m", "gpu", str(CHAPTER / "tests"), *sys.argv[1:]]))
