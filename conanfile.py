"""Conan 2 recipe for tablio: a header-only package whose zlib, lmdb, curl and jpeg options add
the tablio::zlib, tablio::lmdb, tablio::curl and tablio::jpeg components (and require those
libraries).

    conan create . -o "tablio/*:lmdb=False" -o "tablio/*:curl=True" -o "tablio/*:jpeg=True"
"""
import os
import re

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout
from conan.tools.files import copy, load

# The optional components: the libraries each option requires, and what the component links,
# named as Conan's packages of them are (pkg::pkg is the whole package).
COMPONENTS = {
    "zlib": (["zlib/[>=1.2.11 <2]"], ["zlib::zlib"]),
    "lmdb": (["lmdb/[>=0.9.22 <1]"], ["lmdb::lmdb"]),
    "curl": (["libcurl/[>=7.80 <9]"], ["libcurl::libcurl"]),
    "jpeg": (["libjpeg-turbo/[>=2.1 <4]", "libpng/[>=1.6 <2]"], ["libjpeg-turbo::turbojpeg", "libjpeg-turbo::jpeg", "libpng::libpng"]),
}
# tablio::curl's source, compiled once by each program that links it, and the CMake build
# module that adds it to the target; both in every package, which is the same for all options.
CURL_SOURCE = "share/tablio/src/remote.cpp"
CURL_BUILD_MODULE = "share/tablio/tablioCurlSources.cmake"


class TablioConan(ConanFile):
    name = "tablio"
    license = "MIT"
    description = ("Header-only C++20 library for Kaldi archives and scripts, TFRecord of "
                   "tf.Example, Caffe's LMDB of Datum and MNIST's IDX")
    topics = ("kaldi", "tfrecord", "lmdb", "caffe", "idx", "serialization", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    options = {name: [True, False] for name in COMPONENTS}
    # curl is off by default: libcurl brings a TLS library and more with it, and only remote
    # objects (http://, https://, s3://) need it; jpeg too: only decoding images needs it.
    default_options = {"zlib": True, "lmdb": True, "curl": False, "jpeg": False}
    exports_sources = "CMakeLists.txt", "LICENSE", "cmake/*", "include/*", "src/remote.cpp"
    no_copy_source = True

    def set_version(self):
        # One version, the one CMake's project() declares.
        cmake_lists = load(self, os.path.join(self.recipe_folder, "CMakeLists.txt"))
        self.version = re.search(r"project\(tablio VERSION ([0-9.]+)", cmake_lists).group(1)

    def _needs_fast_float(self):
        # libc++ before 20 (macOS's among them) cannot read floating-point text with
        # std::from_chars: tablio reads it through fast_float there.
        return self.settings.os in ("Macos", "iOS") or self.settings.get_safe("compiler.libcxx") == "libc++"

    def requirements(self):
        self.requires("boost/[>=1.75]", options={"header_only": True})
        if self._needs_fast_float():
            self.requires("fast_float/[>=3.9]")
        for name, (requirements, _) in COMPONENTS.items():
            if self.options.get_safe(name):
                for requirement in requirements:
                    self.requires(requirement)

    def validate(self):
        check_min_cppstd(self, 20)
        # Tested on Linux (GCC, Clang with libstdc++ and libc++; x86-64 and ARM64) and on Windows
        # with MinGW-w64; macOS and MSVC are expected to work, untried (docs/platforms.md).
        if self.settings.os == "Windows" and self.settings.get_safe("compiler") == "msvc":
            self.output.warning("tablio has not been built with MSVC: it is tested on Windows with "
                                "MinGW-w64 (see docs/platforms.md)")

    def package_id(self):
        # The headers are the same whatever the options: only what consumers link differs.
        self.info.clear()

    def layout(self):
        cmake_layout(self)

    def generate(self):
        toolchain = CMakeToolchain(self)
        toolchain.generate()

    def package(self):
        # CMake installs the headers alone: the CMake and pkg-config files consumers see come
        # from package_info() below, through Conan's own generators. Installing headers needs
        # none of the components' libraries, nor anything compiled.
        cmake = CMake(self)
        variables = {"TABLIO_INSTALL_HEADERS_ONLY": True, "TABLIO_BUILD_TESTS": False,
                     "TABLIO_BUILD_EXAMPLES": False, "TABLIO_BUILD_TOOLS": False,
                     "TABLIO_BUILD_COMPILED": False}
        variables.update({"TABLIO_WITH_" + name.upper(): False for name in COMPONENTS})
        cmake.configure(variables=variables)
        cmake.install()
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        copy(self, "remote.cpp", os.path.join(self.source_folder, "src"),
             os.path.join(self.package_folder, os.path.dirname(CURL_SOURCE)))
        copy(self, "tablioCurlSources.cmake", os.path.join(self.source_folder, "cmake"),
             os.path.join(self.package_folder, os.path.dirname(CURL_BUILD_MODULE)))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "tablio")
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        core = self.cpp_info.components["core"]
        core.set_property("cmake_target_name", "tablio::tablio")
        core.set_property("pkg_config_name", "tablio")
        core.requires = ["boost::headers"] + (["fast_float::fast_float"] if self._needs_fast_float() else [])
        if self.settings.os in ("Linux", "FreeBSD"):
            core.system_libs = ["pthread"]  # tables' threads (threads=N)
        core.bindirs = []
        core.libdirs = []
        for name, (_, libraries) in COMPONENTS.items():
            if self.options.get_safe(name):
                component = self.cpp_info.components[name]
                component.set_property("cmake_target_name", "tablio::" + name)
                component.set_property("pkg_config_name", "tablio-" + name)
                component.defines = ["TABLIO_WITH_" + name.upper()]
                component.requires = ["core"] + libraries
                component.bindirs = []
                component.libdirs = []
        if self.options.get_safe("curl"):
            # Package information cannot carry a source to compile: in CMake the build module
            # adds it to tablio::curl, and pkg-config names it, as tablio's own tablio-curl.pc does.
            curl = self.cpp_info.components["curl"]
            curl.set_property("cmake_build_modules", [CURL_BUILD_MODULE])
            curl.set_property("pkg_config_custom_content", "remote_source=${prefix}/" + CURL_SOURCE)
            if self.settings.os in ("Linux", "FreeBSD"):
                curl.system_libs = ["pthread"]  # the remote layer's own threads
