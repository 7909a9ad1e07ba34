# `pip install .`: builds the `offgraph` extension with the project's CMake (target
# offgraph_python, OFFGRAPH_PYTHON=ON) and installs the one module file. Works with Debian's
# setuptools (no network-only build backend). OFFGRAPH_BUILD_DIR picks the CMake build
# directory (default build/release, so a tree built by scripts/build.sh is reused). NumPy is
# needed at run time: Debian's python3-numpy (scripts/install-deps.sh), not a pip dependency,
# so an offline install does not look for it on PyPI.
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        # A venv's extension is its base interpreter's (same headers and ABI).
        python = getattr(sys, "_base_executable", sys.executable)
        build = os.path.abspath(os.environ.get("OFFGRAPH_BUILD_DIR", os.path.join(ROOT, "build", "release")))
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                               "-DOFFGRAPH_PYTHON=ON", f"-DPython3_EXECUTABLE={python}"])
        subprocess.check_call(["cmake", "--build", build, "--target", "offgraph_python", "-j", str(os.cpu_count() or 2)])
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy(os.path.join(build, "src", "python", os.path.basename(target)), target)


setup(
    name="offgraph",
    version="0.1.0",
    description="Export HuggingFace causal LMs to stateless step programs and run them on the CPU",
    ext_modules=[CMakeExtension("offgraph")],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    zip_safe=False,
)
