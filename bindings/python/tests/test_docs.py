"""Every Python example in docs/python.md runs as written."""

import pathlib
import re

import pytest

DOC = pathlib.Path(__file__).resolve().parents[3] / "docs" / "python.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_the_page_has_examples():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("i", range(len(BLOCKS)))
def test_docs_python_example_runs(i):
    exec(compile(BLOCKS[i], f"docs/python.md block {i}", "exec"), {})
