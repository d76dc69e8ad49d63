"""Builds the _tablio extension from the tablio headers (../include, or TABLIO_INCLUDE_DIR),
with zlib and liblmdb (Debian: zlib1g-dev, liblmdb-dev), libcurl for remote objects (Debian:
libcurl4-openssl-dev), libjpeg-turbo's TurboJPEG and libjpeg and libpng for images= (Debian:
libturbojpeg0-dev, libjpeg62-turbo-dev, libpng-dev) and pybind11 (pybind11-dev, python3-pybind11)."""

import atexit
import os
import shutil
import sys
import tempfile

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension
from setuptools import setup

# The sources compile in parallel, one per core (NPY_NUM_BUILD_JOBS=N sets how many), as
# setuptools alone would compile them one after the other.
ParallelCompile("NPY_NUM_BUILD_JOBS").install()

here = os.path.dirname(os.path.abspath(__file__))
include = os.environ.get("TABLIO_INCLUDE_DIR", os.path.join(here, "..", "include"))
if not os.path.exists(os.path.join(include, "tablio", "tablio.hpp")):
    raise SystemExit(f"tablio headers not found in {include}: set TABLIO_INCLUDE_DIR")

sources = sorted(os.path.join("src", f) for f in os.listdir(os.path.join(here, "src")) if f.endswith(".cpp"))
macros = [("TABLIO_WITH_ZLIB", None), ("TABLIO_WITH_LMDB", None)]
libraries = ["z", "lmdb"]
# Remote objects (http(s)://, s3://) with libcurl (Debian: libcurl4-openssl-dev), whose code is
# tablio's src/remote.cpp beside the headers.
remote = os.path.join(include, "..", "src", "remote.cpp")
if shutil.which("curl-config") and os.path.exists(remote):
    sources.append(os.path.relpath(remote, here))
    macros.append(("TABLIO_WITH_CURL", None))
    libraries.append("curl")
else:
    print("tablio: no libcurl (curl-config) or src/remote.cpp: remote objects are left out", file=sys.stderr)

# Images (images=) with libjpeg-turbo's TurboJPEG and libpng, where their headers are found.
def has_header(name):
    return any(os.path.exists(os.path.join(d, name)) for d in ("/usr/include", "/usr/local/include"))


if has_header("turbojpeg.h") and has_header("jpeglib.h") and has_header("png.h"):
    macros.append(("TABLIO_WITH_JPEG", None))
    libraries += ["turbojpeg", "jpeg", "png"]
else:
    print("tablio: no turbojpeg.h, jpeglib.h or png.h: images= is left out", file=sys.stderr)

# -O2, unless CFLAGS names the optimisation level (setuptools puts CFLAGS before these flags).
optimisation = [] if any(flag.startswith("-O") for flag in os.environ.get("CFLAGS", "").split()) else ["-O2"]
extension = Pybind11Extension(
    "tablio._tablio",
    sources,
    include_dirs=[include],
    define_macros=macros,
    libraries=libraries,
    cxx_std=20,
    extra_compile_args=optimisation,
)
# pip builds in the folder it installs from: setuptools' build and egg-info folders go to a
# folder of their own, removed at exit, so that `pip install ./python` leaves the checkout as
# it was.
scratch = tempfile.mkdtemp(prefix="tablio-build-")
atexit.register(shutil.rmtree, scratch, ignore_errors=True)
setup(ext_modules=[extension],
      options={"build": {"build_base": os.path.join(scratch, "build")}, "egg_info": {"egg_base": scratch}})
