"""setup.py — the build step kstub adds to a setuptools project.

Before the extension compiles, kstub turns kernels/example.cu into
_kernels_module.c (the CPython module), _kernels.c/.h (the C stubs) and
_kernels.pyi with the Python target (kstub --target python). The
kernel image is nvcc's fatbin, embedded, where nvcc is found; else the
CUDA source is embedded and compiled at run time with NVRTC. libkstub is
linked statically: the wheel carries no other library.

Where kstub is (each an environment variable, else found):
  KSTUB            the kstub program (else `kstub` on PATH)
  KSTUB_TEMPLATES  a template folder whose python/ to use (-T); else --target python, the
                   templates installed with kstub
  KSTUB_INCLUDE    the folder with kstub.h and kstub_python.h (else <prefix>/include)
  KSTUB_LIB        libkstub.a (else <prefix>/lib/libkstub.a)
  NVCC, KSTUB_ARCH nvcc (else on PATH or $CUDA_PATH/bin) and the fatbin's sm_XX list (default 90)
"""
import os
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "kernels", "example.cu")


def kstub_paths():
    kstub = os.environ.get("KSTUB") or shutil.which("kstub")
    if not kstub:
        raise SystemExit("kstub_example: kstub not found: put it on PATH or set KSTUB")
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(kstub)))
    templates = os.environ.get("KSTUB_TEMPLATES")
    target = ["-T", os.path.join(os.path.abspath(templates), "python")] if templates else ["--target", "python"]
    include = os.environ.get("KSTUB_INCLUDE") or os.path.join(prefix, "include")
    lib = os.environ.get("KSTUB_LIB") or os.path.join(prefix, "lib", "libkstub.a")
    return os.path.abspath(kstub), target, os.path.abspath(include), os.path.abspath(lib)


class BuildWithKstub(build_ext):
    """Runs kstub (and nvcc where there is one), then builds the extension from what they wrote."""

    def run(self):
        kstub, target, include, lib = kstub_paths()
        gen = os.path.join(os.path.abspath(self.build_temp), "kstub")
        os.makedirs(gen, exist_ok=True)
        out = os.path.join(gen, "_kernels")
        cmd = [kstub, *target, SOURCE, "-o", out]
        nvcc = os.environ.get("NVCC") or shutil.which("nvcc") or \
            os.path.join(os.environ.get("CUDA_PATH", "/usr/local/cuda"), "bin", "nvcc")
        if os.access(nvcc, os.X_OK):
            fatbin = os.path.join(gen, "example.fatbin")
            archs = os.environ.get("KSTUB_ARCH", "90").split(",")
            gencode = [f"-gencode=arch=compute_{a},code=sm_{a}" for a in archs]
            gencode.append(f"-gencode=arch=compute_{archs[-1]},code=compute_{archs[-1]}")
            subprocess.check_call([nvcc, "-fatbin", *gencode, SOURCE, "-o", fatbin])
            cmd += ["--embed", fatbin]
        else:
            cmd += ["--embed-source"]
        subprocess.check_call(cmd)
        for ext in self.extensions:
            ext.sources = [out + "_module.c", out + ".c"]
            ext.include_dirs = [gen, include]
            ext.extra_objects = [lib]
            ext.libraries = ["dl", "pthread"]
            ext.extra_compile_args = ["-std=c11"]
        super().run()
        # The stub beside the module, for mypy, pyright and editors.
        pkg = os.path.join(self.build_lib, "kstub_example")
        os.makedirs(pkg, exist_ok=True)
        shutil.copyfile(out + ".pyi", os.path.join(pkg, "_kernels.pyi"))


setup(ext_modules=[Extension("kstub_example._kernels", sources=[])], cmdclass={"build_ext": BuildWithKstub})
