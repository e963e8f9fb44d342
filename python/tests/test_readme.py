"""The README's Python example (the ```python block after the marker comment) runs and prints
the result the README states."""
import contextlib
import io
import os
import re
from pathlib import Path

MARKER = "<!-- python-example: tested by python/tests/test_readme.py -->"
SOURCE = Path(os.environ.get("TESSEL_SOURCE_DIR", Path(__file__).resolve().parents[2]))
RESULT = re.compile(r"loss (\d+\.\d+), accuracy (\d+\.\d+)")


def readme_example():
    text = (SOURCE / "README.md").read_text()
    assert text.count(MARKER) == 1, "the README needs exactly one marked Python example"
    after = text.split(MARKER, 1)[1]
    match = re.match(r"\s*```python\n(.*?)```\n(.*?)\n\n", after, re.S)
    assert match, "the marker must be followed by a ```python block"
    return match.group(1), match.group(2)


def test_readme_example_trains_to_the_stated_result():
    code, prose = readme_example()
    assert len(code.splitlines()) < 20
    out = io.StringIO()
    namespace = {"__name__": "readme_example"}
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), namespace)
    assert namespace["loss_and_grads"].trace_count == 1  # "traced and compiled once"
    printed = RESULT.search(out.getvalue())
    stated = RESULT.search(prose)
    assert printed and stated, (out.getvalue(), prose)
    assert float(printed.group(2)) == float(stated.group(2)) == 1.0
    assert abs(float(printed.group(1)) - float(stated.group(1))) <= 0.002
