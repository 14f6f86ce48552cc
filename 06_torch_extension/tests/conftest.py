"""Shared fixtures. GPU tests carry @pytest.mark.gpu and are skipped without a GPU; ctest runs them
through run_gpu_tests.py, which exits 77 (reported as *skipped*) before pytest even starts.

The tests import the chapter's helpers (demos/) and arch_list.py. pytest.ini puts those folders on
sys.path when pytest starts in the chapter folder; this file does the same when pytest starts
anywhere else, e.g. `pytest -m gpu -k gradients` at the repository root."""

import importlib
import sys
from pathlib import Path

import pytest
import torch

CHAPTER = Path(__file__).resolve().parents[1]
for folder in (CHAPTER, CHAPTER / "demos"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skipped where torch.cuda.is_available() is False)")


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (torch.cuda.is_available() is False)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def package():
    """The installable package, built by CMake into build/06_torch_extension/pkg."""
    try:
        return importlib.import_module("cuda_course")
    except ImportError as error:
        pytest.fail(f"cannot import cuda_course ({error}): build it with "
                    "`cmake --build build --target 06_torch_extension` and put build/06_torch_extension/pkg "
                    "on PYTHONPATH (ctest does both)")
