"""Runs conanfile.py the way `conan create` does, for the steps that make the package:
set_version, the export of exports_sources (package() sees those files alone), requirements,
package (the real CMake configure and install, with the arguments Conan passes) and
package_info. Conan itself is not needed: this module stands in for the parts of its API the
recipe uses. Then it writes the CMake package that Conan's CMakeDeps would write from
package_info, so that a consumer can be built against the package.

    conan_recipe.py SOURCE_DIR WORK_DIR zlib=True lmdb=False curl=True jpeg=True
"""
import fnmatch
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import types


class Option:
    def __init__(self, value):
        self.value = value

    def __bool__(self):
        return self.value == "True"

    def __str__(self):
        return self.value


class Options:
    def __init__(self, values):
        self._values = {k: Option(v) for k, v in values.items()}

    def __getattr__(self, name):
        return self._values[name]

    def get_safe(self, name):
        return self._values.get(name)


class CppInfo:
    def __init__(self):
        self.properties = {}
        self.components = Components()
        self.includedirs = ["include"]
        self.defines = []
        self.requires = []
        self.system_libs = []

    def set_property(self, name, value):
        self.properties[name] = value


class Components(dict):
    def __missing__(self, name):
        self[name] = CppInfo()
        return self[name]


class ConanFile:
    def requires(self, reference, **kwargs):
        self.requirements_made.append(reference)


class CMake:
    def __init__(self, conanfile):
        self.conanfile = conanfile

    def configure(self, variables=None):
        c = self.conanfile
        # What Conan 2's CMake.configure passes: its toolchain's settings, the package folder as
        # the prefix, and the recipe's variables as -DNAME="value" with Python's str().
        arguments = ["cmake", "-S", c.source_folder, "-B", c.build_folder,
                     "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_POLICY_DEFAULT_CMP0091=NEW",
                     "-DCMAKE_INSTALL_PREFIX=" + c.package_folder]
        arguments += ["-D%s=%s" % (k, v) for k, v in (variables or {}).items()]
        subprocess.run(arguments, check=True, stdout=subprocess.DEVNULL)

    def install(self):
        c = self.conanfile
        subprocess.run(["cmake", "--install", c.build_folder, "--config", "Release", "--prefix",
                        c.package_folder], check=True, stdout=subprocess.DEVNULL)


class ConanInvalidConfiguration(Exception):
    pass



class Compiler(types.SimpleNamespace):
    """A setting with subsettings: compares as its value (gcc, msvc...), as Conan's do."""

    def __init__(self, value, **subsettings):
        super().__init__(**subsettings)
        self.value = value

    def __eq__(self, other):
        return self.value == other

    def __str__(self):
        return self.value


class Settings(types.SimpleNamespace):
    """Conan's settings as a recipe reads them: attributes, and get_safe("a.b") for a subsetting."""

    def get_safe(self, name):
        value = self
        for part in name.split("."):
            value = getattr(value, part, None)
        return value

def check_min_cppstd(conanfile, cppstd):
    if int(str(conanfile.settings.compiler.cppstd).lstrip("gnu")) < int(cppstd):
        raise ConanInvalidConfiguration("needs C++%s" % cppstd)


def copy(conanfile, pattern, src, dst):
    for name in os.listdir(src):
        if fnmatch.fnmatch(name, pattern):
            os.makedirs(dst, exist_ok=True)
            shutil.copy(os.path.join(src, name), dst)


def load(conanfile, path):
    with open(path) as f:
        return f.read()


def install_conan_stand_in():
    modules = {name: types.ModuleType(name) for name in
               ("conan", "conan.errors", "conan.tools", "conan.tools.build", "conan.tools.cmake",
                "conan.tools.files")}
    modules["conan"].ConanFile = ConanFile
    modules["conan.errors"].ConanInvalidConfiguration = ConanInvalidConfiguration
    modules["conan.tools.build"].check_min_cppstd = check_min_cppstd
    modules["conan.tools.cmake"].CMake = CMake
    modules["conan.tools.cmake"].CMakeToolchain = lambda conanfile: types.SimpleNamespace(
        generate=lambda: None)
    modules["conan.tools.cmake"].cmake_layout = lambda conanfile: None
    modules["conan.tools.files"].copy = copy
    modules["conan.tools.files"].load = load
    sys.modules.update(modules)


# What the consumer's CMake sees for each requirement, as Conan's packages name them.
DEPENDENCIES = {
    "boost::headers": ("find_package(Boost 1.75 REQUIRED)", "Boost::headers"),
    "zlib::zlib": ("find_package(ZLIB REQUIRED)", "ZLIB::ZLIB"),
    "lmdb::lmdb": ("include(\"%s/cmake/tablioDependencies.cmake\")\ntablio_find_lmdb(found)",
                   "lmdb::lmdb"),
    "libcurl::libcurl": ("find_package(CURL REQUIRED)", "CURL::libcurl"),
    "libjpeg-turbo::turbojpeg": ("include(\"%s/cmake/tablioDependencies.cmake\")\ntablio_find_jpeg(found)",
                                 "tablio_turbojpeg"),
    "libjpeg-turbo::jpeg": ("find_package(JPEG REQUIRED)", "JPEG::JPEG"),
    "libpng::libpng": ("find_package(PNG REQUIRED)", "PNG::PNG"),
}
# A requirement each option adds, by package name.
OPTION_PACKAGES = {"zlib": "zlib", "lmdb": "lmdb", "curl": "libcurl", "jpeg": "libjpeg-turbo"}
# What a header-only package may hold besides include/tablio/: the licence, and tablio::curl's
# source with the build module that adds it to the target.
PACKAGED_FILES = ("licenses/LICENSE", "share/tablio/src/remote.cpp", "share/tablio/tablioCurlSources.cmake")


def export_sources(recipe, source_dir, out_dir):
    """Copies the files exports_sources names, as Conan exports them: package() sees no other."""
    shutil.rmtree(out_dir, ignore_errors=True)
    for pattern in recipe.exports_sources:
        fixed = re.split(r"[*?[]", pattern)[0]  # the part before any wildcard
        if fixed == pattern:
            paths = [pattern]
        else:
            paths = [os.path.relpath(os.path.join(folder, name), source_dir)
                     for folder, _, names in os.walk(os.path.join(source_dir, os.path.dirname(fixed)))
                     for name in names]
        for path in fnmatch.filter(paths, pattern):
            os.makedirs(os.path.dirname(os.path.join(out_dir, path)), exist_ok=True)
            shutil.copy(os.path.join(source_dir, path), os.path.join(out_dir, path))


def write_cmake_package(recipe, source_dir, out_dir):
    lines = []
    build_modules = []
    targets = {"core": None}
    for name, component in recipe.cpp_info.components.items():
        targets[name] = component.properties["cmake_target_name"]
    for name, component in recipe.cpp_info.components.items():
        target = targets[name]
        lines.append("add_library(%s INTERFACE IMPORTED)" % target)
        includes = [os.path.join(recipe.package_folder, d) for d in component.includedirs]
        links = []
        for requirement in component.requires:
            if requirement in targets:
                links.append(targets[requirement])
            else:
                find, library = DEPENDENCIES[requirement]
                lines.insert(0, find.replace("%s", source_dir))
                links.append(library)
        links += component.system_libs
        lines.append('set_target_properties(%s PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "%s" '
                     'INTERFACE_COMPILE_DEFINITIONS "%s" INTERFACE_LINK_LIBRARIES "%s")'
                     % (target, ";".join(includes), ";".join(component.defines), ";".join(links)))
        build_modules += component.properties.get("cmake_build_modules", [])
    # CMakeDeps includes the build modules once every target exists.
    for module in build_modules:
        lines.append('include("%s")' % os.path.join(recipe.package_folder, module))
    file_name = recipe.cpp_info.properties["cmake_file_name"]
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, file_name + "-config.cmake"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out_dir, file_name + "-config-version.cmake"), "w") as f:
        f.write('set(PACKAGE_VERSION "%s")\nset(PACKAGE_VERSION_COMPATIBLE TRUE)\n' % recipe.version)


def main():
    source_dir, work_dir = sys.argv[1], sys.argv[2]
    options = dict(argument.split("=") for argument in sys.argv[3:])
    install_conan_stand_in()
    spec = importlib.util.spec_from_file_location("conanfile", os.path.join(source_dir, "conanfile.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    recipe = module.TablioConan()
    recipe.options = Options(dict({k: str(v) for k, v in recipe.default_options.items()}, **options))
    recipe.recipe_folder = source_dir
    recipe.source_folder = os.path.join(work_dir, "source")
    recipe.build_folder = os.path.join(work_dir, "build")
    recipe.package_folder = os.path.join(work_dir, "package")
    recipe.requirements_made = []
    recipe.cpp_info = CppInfo()

    recipe.set_version()
    # The consumer's profile decides the C++ standard; the recipe refuses one before C++20.
    recipe.settings = Settings(os="Linux", compiler=Compiler("gcc", cppstd="17", libcxx="libstdc++11"))
    try:
        recipe.validate()
        sys.exit("validate() accepted compiler.cppstd=17")
    except ConanInvalidConfiguration:
        pass
    recipe.settings.compiler.cppstd = "20"
    recipe.validate()
    # MSVC, never tried, is accepted with a warning that says so.
    warnings = []
    recipe.output = types.SimpleNamespace(warning=warnings.append)
    recipe.settings = Settings(os="Windows", compiler=Compiler("msvc", cppstd="20", libcxx=None))
    recipe.validate()
    if not any("MSVC" in w for w in warnings):
        sys.exit("validate() gave MSVC no warning: %s" % warnings)
    recipe.settings = Settings(os="Linux", compiler=Compiler("gcc", cppstd="20", libcxx="libstdc++11"))
    recipe.requirements()
    export_sources(recipe, source_dir, recipe.source_folder)
    recipe.layout()
    recipe.generate()
    recipe.package()
    recipe.package_info()

    # Each option adds its library to the requirements, and its component to the package.
    for name, package in OPTION_PACKAGES.items():
        wanted = bool(recipe.options.get_safe(name))
        if any(r.startswith(package + "/") for r in recipe.requirements_made) != wanted:
            sys.exit("option %s=%s, but the requirements are %s" % (name, wanted, recipe.requirements_made))
        if (name in recipe.cpp_info.components) != wanted:
            sys.exit("option %s=%s, but the components are %s" % (name, wanted, list(recipe.cpp_info.components)))

    # A header-only package holds headers and PACKAGED_FILES, nothing else, whatever the options
    # (package_id() makes it one package for all of them).
    for root, _, files in os.walk(recipe.package_folder):
        for name in files:
            path = os.path.relpath(os.path.join(root, name), recipe.package_folder)
            if not (path.startswith("include/tablio/") or path in PACKAGED_FILES):
                sys.exit("unexpected file in the package: " + path)
    for path in PACKAGED_FILES:
        if not os.path.isfile(os.path.join(recipe.package_folder, path)):
            sys.exit("the package lacks " + path)
    # Variables added to the pkg-config files name files the package holds.
    for name, component in recipe.cpp_info.components.items():
        content = component.properties.get("pkg_config_custom_content", "")
        for variable, value in re.findall(r"^(\w+)=\$\{prefix\}/(.*)$", content, re.M):
            if not os.path.isfile(os.path.join(recipe.package_folder, value)):
                sys.exit("%s's pkg-config variable %s names %s, not in the package" % (name, variable, value))
    print("requirements:", ", ".join(recipe.requirements_made))
    write_cmake_package(recipe, source_dir, os.path.join(work_dir, "generators"))


if __name__ == "__main__":
    main()
