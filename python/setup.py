"""Builds omnilearn._core with the project's own CMake build (python/CMakeLists.txt, target omnilearn_python): one
build description for the extension, whether it is built by `cmake --build` or by pip. Needs the repository around
this folder (pip builds in place) and the project's build dependencies (scripts/setup.sh).

Environment: OMNILEARN_SOURCE_DIR (the repository root; default: the folder above this one),
OMNILEARN_PIP_BUILD_DIR (the CMake build folder; default: one under setuptools' build_temp),
CMAKE_BUILD_PARALLEL_LEVEL (compile jobs; default: the CPU count).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name: str, target: str):
        super().__init__(name, sources=[])
        self.target = target


class CMakeBuild(build_ext):
    def build_extension(self, ext: CMakeExtension) -> None:
        source = Path(os.environ.get("OMNILEARN_SOURCE_DIR", HERE.parent)).resolve()
        if not (source / "CMakeLists.txt").exists() or not (source / "python" / "CMakeLists.txt").exists():
            raise RuntimeError(f"omnilearn: {source} is not the OmniLearn repository (no CMakeLists.txt and "
                               "python/CMakeLists.txt): install from a checkout with `pip install "
                               "--no-build-isolation ./python`, or set OMNILEARN_SOURCE_DIR")
        cmake = shutil.which("cmake")
        if cmake is None:
            raise RuntimeError("omnilearn: cmake not found (Debian: apt-get install cmake; see scripts/setup.sh)")
        build = Path(os.environ.get("OMNILEARN_PIP_BUILD_DIR", Path(self.build_temp) / "cmake")).resolve()
        configure = [cmake, "-S", str(source), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                     f"-DPython_EXECUTABLE={sys.executable}", "-DOMNILEARN_BUILD_PYTHON=ON",
                     "-DOMNILEARN_BUILD_SIM=OFF", "-DOMNILEARN_BUILD_EMULATOR=OFF", "-DOMNILEARN_BUILD_TESTS=OFF",
                     "-DOMNILEARN_BUILD_BENCH=OFF"]
        if shutil.which("ninja") and not (build / "CMakeCache.txt").exists():
            configure += ["-G", "Ninja"]
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.run(configure, check=True)
        subprocess.run([cmake, "--build", str(build), "--target", ext.target, "-j", jobs], check=True)
        built = sorted((build / "python" / "omnilearn").glob("_core*.so"))
        if not built:
            raise RuntimeError(f"omnilearn: the build made no _core extension in {build / 'python' / 'omnilearn'}")
        dest = Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], dest)


setup(ext_modules=[CMakeExtension("omnilearn._core", target="omnilearn_python")], cmdclass={"build_ext": CMakeBuild})
