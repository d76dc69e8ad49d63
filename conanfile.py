"""Conan 2 recipe for tablio: a header-only package whose zlib and lmdb options add the
tablio::zlib and tablio::lmdb components (and require those libraries).

    conan create . -o "tablio/*:lmdb=False"
"""
import os
import re

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout
from conan.tools.files import copy, load


class TablioConan(ConanFile):
    name = "tablio"
    license = "MIT"
    description = ("Header-only C++20 library for Kaldi archives and scripts, TFRecord of "
                   "tf.Example, Caffe's LMDB of Datum and MNIST's IDX")
    topics = ("kaldi", "tfrecord", "lmdb", "caffe", "idx", "serialization", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    options = {"zlib": [True, False], "lmdb": [True, False]}
    default_options = {"zlib": True, "lmdb": True}
    exports_sources = "CMakeLists.txt", "LICENSE", "cmake/*", "include/*"
    no_copy_source = True

    def set_version(self):
        # One version, the one CMake's project() declares.
        cmake_lists = load(self, os.path.join(self.recipe_folder, "CMakeLists.txt"))
        self.version = re.search(r"project\(tablio VERSION ([0-9.]+)", cmake_lists).group(1)

    def requirements(self):
        self.requires("boost/[>=1.75]", options={"header_only": True})
        if self.options.zlib:
            self.requires("zlib/[>=1.2.11 <2]")
        if self.options.lmdb:
            self.requires("lmdb/[>=0.9.22 <1]")

    def validate(self):
        check_min_cppstd(self, 20)

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
        # from package_info() below, through Conan's own generators.
        cmake = CMake(self)
        cmake.configure(variables={
            "TABLIO_INSTALL_HEADERS_ONLY": True,
            "TABLIO_BUILD_TESTS": False,
            "TABLIO_BUILD_EXAMPLES": False,
            "TABLIO_BUILD_TOOLS": False,
            "TABLIO_WITH_ZLIB": bool(self.options.zlib),
            "TABLIO_WITH_LMDB": bool(self.options.lmdb),
        })
        cmake.install()
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "tablio")
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        core = self.cpp_info.components["core"]
        core.set_property("cmake_target_name", "tablio::tablio")
        core.set_property("pkg_config_name", "tablio")
        core.requires = ["boost::headers"]
        core.bindirs = []
        core.libdirs = []
        for name, library in (("zlib", "zlib::zlib"), ("lmdb", "lmdb::lmdb")):
            if self.options.get_safe(name):
                component = self.cpp_info.components[name]
                component.set_property("cmake_target_name", "tablio::" + name)
                component.set_property("pkg_config_name", "tablio-" + name)
                component.defines = ["TABLIO_WITH_" + name.upper()]
                component.requires = ["core", library]
                component.bindirs = []
                component.libdirs = []
