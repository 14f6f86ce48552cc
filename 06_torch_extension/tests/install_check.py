"""Runs Part 2's install commands, exactly as printed, in a fresh virtual environment.

    python3 06_torch_extension/tests/install_check.py <work dir>

The commands are the bash block that follows the marker `<!-- install-commands -->` in
part2/README.md. They run from <work dir>, which holds a copy of the package as ./06_torch_extension (the
sources only: pip builds in the source tree, and the build is kept there for the next run), in a venv
made with --without-pip that sees this interpreter's packages (torch, pip, setuptools) through a .pth
file; `python3 -m pip` then installs into the venv. (A venv's --system-site-packages would not do:
inside another venv, it shows the *base* interpreter's packages, without that venv's torch.)
Then a fresh interpreter of the venv must import the installed cuda_course and find its operators.
Exit 0 on success, 1 on failure; the last line is the SUMMARY line.
"""

import json
import os
import re
import shutil
import site
import subprocess
import sys
from pathlib import Path

CHAPTER = Path(__file__).resolve().parents[1]
PACKAGE_FILES = ["setup.py", "pyproject.toml", "csrc", "src"]


def readme_commands() -> str:
    text = (CHAPTER / "part2" / "README.md").read_text()
    match = re.search(r"<!-- install-commands -->\s*```bash\n(.*?)```", text, re.S)
    if not match:
        sys.exit("install_check: no ```bash block after <!-- install-commands --> in part2/README.md")
    return match.group(1)


def make_venv(venv: Path) -> Path:
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python3"
    venv_site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip()
    parents = [p for p in site.getsitepackages() + [site.getusersitepackages()] if Path(p).is_dir()]
    (Path(venv_site) / "parent_environment.pth").write_text("\n".join(parents) + "\n")
    return python


def main() -> int:
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} <work dir>", file=sys.stderr)
        return 2
    work = Path(sys.argv[1]).resolve()
    copy = work / "06_torch_extension"
    copy.mkdir(parents=True, exist_ok=True)
    for name in PACKAGE_FILES:  # copy2 keeps modification times: ninja rebuilds only what changed
        source = CHAPTER / name
        if source.is_dir():
            shutil.copytree(source, copy / name, dirs_exist_ok=True, copy_function=shutil.copy2,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(source, copy / name)

    python = make_venv(work / "venv")
    commands = readme_commands()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = f"{python.parent}{os.pathsep}{env['PATH']}"
    env["VIRTUAL_ENV"] = str(python.parent.parent)
    print(f"In a fresh venv ({python.parent.parent}), from {work}:\n{commands}", flush=True)
    installed = subprocess.run(["bash", "-euo", "pipefail", "-c", commands], cwd=work, env=env)

    probe = ("import json, torch, cuda_course; print(json.dumps({'file': cuda_course.__file__, "
             "'ops': [op for op in cuda_course.__all__ if hasattr(torch.ops.cuda_course, op)]}))")
    found = subprocess.run([str(python), "-c", probe], cwd="/", env=env, capture_output=True, text=True)
    print(found.stdout + found.stderr)
    result = json.loads(found.stdout.splitlines()[-1]) if found.returncode == 0 else {}
    checks = {
        "the README's install commands exit 0": installed.returncode == 0,
        "the venv imports cuda_course from its own site-packages":
            str(result.get("file", "")).startswith(str(python.parent.parent)),
        "all 7 operators registered": len(result.get("ops", [])) == 7,
    }
    for what, ok in checks.items():
        print(f"Check {'ok' if ok else 'FAILED'}: {what}")
    failed = sum(not ok for ok in checks.values())
    summary = {"program": "06_torch_extension_install", "checks": len(checks), "failed": failed, "exact": 0,
               "goals": [], "figures": {}}
    print("\nSUMMARY " + json.dumps(summary, separators=(",", ":")))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
