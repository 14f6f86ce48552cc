#!/usr/bin/env python3
"""scripts/excerpts.py on a small tree of its own: it fills, it checks, and it fails when it must."""
import pathlib
import subprocess
import sys
import tempfile

SCRIPT = pathlib.Path(__file__).resolve().parent.parent / "scripts" / "excerpts.py"
SOURCE = """#include <cstdio>
// [excerpt:kernel]
__global__ void add(int n, float* y) {
    // [excerpt:body]
    int i = threadIdx.x;
    // [/excerpt:body]
    if (i < n) y[i] += 1.0f;
}
// [/excerpt:kernel]
"""
PAGE = """# Page
<!-- CODE: a.cu kernel -->
<!-- /CODE -->
text
<!-- CODE-DIFF: a.cu:body b.cu:body -->
stale
<!-- /CODE -->
"""


def run(root, *args):
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root), *args],
                          capture_output=True, text=True)


def main():
    failures = []

    def expect(what, condition):
        print(("ok   " if condition else "FAIL ") + what)
        if not condition:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        (root / "a.cu").write_text(SOURCE)
        (root / "b.cu").write_text(SOURCE.replace("threadIdx.x;", "blockIdx.x * blockDim.x + threadIdx.x;"))
        page = root / "page.md"
        page.write_text(PAGE)
        expect("a stale page fails --check", run(root, "--check", str(page)).returncode == 1)
        expect("filling succeeds", run(root, str(page)).returncode == 0)
        text = page.read_text()
        expect("the excerpt is shown without marker lines",
               "```cuda\n__global__ void add(int n, float* y) {\n    int i = threadIdx.x;\n" in text
               and "[excerpt" not in text)
        expect("the diff shows the changed line",
               "-int i = threadIdx.x;\n+int i = blockIdx.x * blockDim.x + threadIdx.x;\n" in text)
        expect("a filled page passes --check", run(root, "--check", str(page)).returncode == 0)
        (root / "a.cu").write_text(SOURCE.replace("+= 1.0f", "+= 2.0f"))
        expect("a changed source makes the page stale", run(root, "--check", str(page)).returncode == 1)
        page.write_text("<!-- CODE: a.cu missing -->\n<!-- /CODE -->\n")
        result = run(root, "--check", str(page))
        expect("a missing excerpt is named", result.returncode == 1 and "[excerpt:missing]" in result.stderr)
        page.write_text("<!-- CODE: a.cu kernel -->\nno close\n")
        expect("an unclosed block fails", run(root, "--check", str(page)).returncode == 1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
