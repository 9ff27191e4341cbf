# Debian packages, one per install component (cmake/TallyInstall.cmake,
# tools/CMakeLists.txt), made by CPack's DEB generator:
#
#   libtally0.1   runtime  libtally.so.0.1 and its SONAME link; named from
#                          the SONAME as Debian names shared library
#                          packages (libtally.so.0.1 -> libtally0.1), so a
#                          new ABI is a new package beside the old one
#   libtally-dev  dev      headers, libtally.a, the libtally.so link, the
#                          CMake package, tally.pc and tally-c.pc
#   tally-tools   tools    counterctl, its man page and completions
#
#   cmake --build BUILD && cpack --config BUILD/CPackConfig.cmake -B OUT
#
# tests/packaging/check_debs.sh builds them and checks them (control
# fields, paths, counterctl run from an extracted root, the C example built
# with pkg-config). Included at the end of the top-level CMakeLists.txt,
# after every install() rule. dpkg-shlibdeps (package dpkg-dev) and file
# must be installed.
#
# Which RocksDB they hold is the tree's TALLY_ROCKSDB_BUILD. The packages
# to ship are made with `release` (`./scripts/dev package`: Debian's
# RocksDB source built in Release, without the assertions and sync points
# of Debian's librocksdb; docs/embedding.md): libtally.so and libtally.a
# contain RocksDB, libtally0.1 depends on RocksDB's compression libraries
# instead of librocksdb7.8, libtally-dev on their -dev packages instead of
# librocksdb-dev, and the copyright files of both carry RocksDB's notices.
# A `system` tree (CI's) makes packages on Debian's librocksdb7.8.
#
# Paths. The packages install under /usr whatever CMAKE_INSTALL_PREFIX the
# tree was configured with (CPACK_PACKAGING_INSTALL_PREFIX: cpack installs
# each component with that prefix into its staging directory). What goes
# under it is the tree's GNUInstallDirs values, fixed at configure time:
# the install rules, the pkg-config files' libdir, the CMake package's
# location and counterctl's RPATH ($ORIGIN/../<libdir>) all derive from
# CMAKE_INSTALL_LIBDIR, so cpack cannot move the library afterwards
# without breaking them. GNUInstallDirs gives the Debian multiarch libdir
# (lib/x86_64-linux-gnu) for the prefix /usr only, `lib` for /usr/local.
# So the top-level CMakeLists.txt, right after include(GNUInstallDirs),
# turns `lib` into lib/<multiarch> on Debian whatever the prefix
# (/usr/local/lib/<multiarch> is on Debian's loader, pkg-config and
# find_package paths too): a tree configured with the default prefix, as
# CI's is, makes the same packages as one configured with
# -DCMAKE_INSTALL_PREFIX=/usr. (Setting CPACK_SET_DESTDIR or passing
# -D CPACK_... to cpack changes the prefix only, never the libdir.)

# A project that builds tally as a subproject makes its own packages.
if(NOT TALLY_TOP_LEVEL)
  return()
endif()
# The packages are the shared library's: a static-only tree has no runtime
# component (and TALLY_STATIC_ROCKSDB's librocksdb.a inside a program is
# not what librocksdb-dev's users expect).
if(NOT TALLY_BUILD_SHARED)
  message(STATUS "Packaging: TALLY_BUILD_SHARED is off, no Debian packages")
  return()
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  message(WARNING "Packaging: CMAKE_INSTALL_LIBDIR is absolute "
    "(${CMAKE_INSTALL_LIBDIR}); the Debian packages need it relative to "
    "the prefix, as GNUInstallDirs gives it")
endif()
if(CMAKE_LIBRARY_ARCHITECTURE AND
   NOT CMAKE_INSTALL_LIBDIR STREQUAL "lib/${CMAKE_LIBRARY_ARCHITECTURE}")
  message(STATUS "Packaging: CMAKE_INSTALL_LIBDIR is ${CMAKE_INSTALL_LIBDIR}"
    ", so the Debian packages hold /usr/${CMAKE_INSTALL_LIBDIR}, not the "
    "multiarch /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}")
endif()

set(TALLY_DEB_RUNTIME "libtally${TALLY_SOVERSION}")
# What the descriptions say of RocksDB inside the libraries.
set(_tally_deb_rocksdb "")
if(TALLY_ROCKSDB_BUILD STREQUAL "release")
  set(_tally_deb_rocksdb "
It contains RocksDB, Debian's source package ${TALLY_ROCKSDB_RELEASE_VERSION} built in Release.")
endif()
set(TALLY_DEB_VERSION "${PROJECT_VERSION}")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tally)
set(CPACK_PACKAGE_VENDOR "the tally authors")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "tally authors <tally@example.invalid>")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Debian ships stripped binaries (the debug info would go to -dbgsym
# packages, which these are not).
set(CPACK_STRIP_FILES ON)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
if(TARGET counterctl)
  list(APPEND CPACK_COMPONENTS_ALL tools)
endif()
# NAME_VERSION_ARCH.deb, the architecture from dpkg.
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# The version is exactly the project's (no Debian revision), so the
# (= VERSION) dependencies below name the version the packages have.
set(CPACK_DEBIAN_PACKAGE_VERSION "${TALLY_DEB_VERSION}")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)

# Shared library dependencies from dpkg-shlibdeps: librocksdb7.8 (or, with
# the release RocksDB inside, its compression libraries), libhiredis0.14,
# libc6, libstdc++6 and libgcc-s1 with the versions the binaries need.
# counterctl's libtally.so.0.1 is in no installed package, and without
# the library dpkg-shlibdeps fails: -l names the runtime component's
# staging directory, by a path relative to the tools component's, where
# dpkg-shlibdeps runs (cpack stages every component before it packages
# any). It finds no package for the library (--ignore-missing-info, which
# CPack passes), so the tools package names libtally0.1 itself, below.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS
    "../runtime${CPACK_PACKAGING_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}")

# libtally0.1: a shlibs file, so that a package built against it (by
# dpkg-shlibdeps) depends on libtally0.1 (>= this version). CPack has no
# per-component switch for it; only libtally0.1 holds a shared object
# (libtally-dev's libtally.so is a link), so only it gets one.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME "${TALLY_DEB_RUNTIME}")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION
"embedded sharded counters with exactly-once increments (library)
tally is an embedded storage engine for sharded counters on RocksDB:
increments as merge operands, once-increments deduplicated by event id
across crashes, keyed and time-bucketed counters, strict counters, quotas,
reservations, claims, roll-ups, an outbox with exactly-once sync, and
checkpoints and backups.
This package holds the shared library, with its C++ and C APIs.${_tally_deb_rocksdb}")

# libtally-dev: the exact library version (its libtally.so link and
# headers belong to that build); libhiredis-dev and RocksDB for linking
# libtally.a, which needs hiredis (the cluster backend's client) and
# RocksDB: librocksdb-dev (tally.pc's Requires.private), or, where
# libtally.a holds the release RocksDB, the -dev packages of the libraries
# it names instead (TALLY_ROCKSDB_RELEASE_LIBS), asked of dpkg by the file
# the linker would take for each.
set(_tally_dev_depends "${TALLY_DEB_RUNTIME} (= ${TALLY_DEB_VERSION})")
if(TALLY_ROCKSDB_BUILD STREQUAL "release")
  foreach(lib IN LISTS TALLY_ROCKSDB_RELEASE_LIBS)
    find_library(TALLY_DEB_LIB_${lib} NAMES ${lib})
    execute_process(COMMAND dpkg-query -S "${TALLY_DEB_LIB_${lib}}"
      OUTPUT_VARIABLE owner ERROR_QUIET RESULT_VARIABLE failed)
    string(REGEX REPLACE "[:,].*" "" owner "${owner}")
    if(failed OR owner STREQUAL "")
      message(WARNING "Packaging: no Debian package holds "
        "'${TALLY_DEB_LIB_${lib}}' (-l${lib}): libtally-dev will not "
        "depend on it")
      continue()
    endif()
    list(APPEND _tally_dev_depends "${owner}")
  endforeach()
else()
  list(APPEND _tally_dev_depends librocksdb-dev)
endif()
list(APPEND _tally_dev_depends libhiredis-dev)
list(REMOVE_DUPLICATES _tally_dev_depends)
list(JOIN _tally_dev_depends ", " _tally_dev_depends)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libtally-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${_tally_dev_depends}")
unset(_tally_dev_depends)
set(CPACK_DEBIAN_DEV_DESCRIPTION
"embedded sharded counters with exactly-once increments (development)
tally is an embedded storage engine for sharded counters with exactly-once
increments, on RocksDB.
This package holds the C++ headers (tally/tally.h) and the C header
(tally/c.h), the static library, the CMake package (find_package(tally))
and the pkg-config files tally.pc and tally-c.pc.${_tally_deb_rocksdb}")
unset(_tally_deb_rocksdb)

# tally-tools: counterctl was linked against this very libtally.
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME tally-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS
    "${TALLY_DEB_RUNTIME} (= ${TALLY_DEB_VERSION})")
set(CPACK_DEBIAN_TOOLS_DESCRIPTION
"command-line tool for tally counter databases
counterctl creates, increments, reads, verifies, backs up, exports and
imports tally databases, with JSON output, bash and zsh completion and a
man page.")

# Each package's /usr/share/doc/PACKAGE/copyright (Debian policy 12.5), in
# the machine-readable format; docs/license.md says why these notices.
# EXCLUDE_FROM_ALL: cpack installs them (it installs one component at a
# time), a plain `cmake --install` does not.
set(_tally_apache
"License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the \"License\"); you may
 not use this file except in compliance with the License. You may obtain a
 copy of the License at
 .
 http://www.apache.org/licenses/LICENSE-2.0
 .
 Unless required by applicable law or agreed to in writing, software
 distributed under the License is distributed on an \"AS IS\" BASIS,
 WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 See the License for the specific language governing permissions and
 limitations under the License.
 .
 On Debian systems, the complete text of the Apache License, Version 2.0
 can be found in /usr/share/common-licenses/Apache-2.0.
")
set(_tally_copyright
"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: tally
Upstream-Contact: tally authors <tally@example.invalid>

Files: *
Copyright: 2026 the tally authors
License: Apache-2.0

Files: flatbuffers/*
Copyright: 2014 Google Inc.
License: Apache-2.0
Comment: the FlatBuffers runtime headers, compiled into libtally.
")
set(_tally_tools_copyright
"
Files: CLI/*
Copyright: 2017-2021 University of Cincinnati, developed by Henry Schreiner
 under NSF AWARD 1414736 and by the respective contributors.
License: BSD-3-clause
Comment: CLI11, header-only, compiled into counterctl.

Files: nlohmann/*
Copyright: 2013-2022 Niels Lohmann
License: Expat
Comment: JSON for Modern C++, header-only, compiled into counterctl.
")
set(_tally_tools_licenses
"
License: BSD-3-clause
 Redistribution and use in source and binary forms, with or without
 modification, are permitted provided that the following conditions are
 met:
 1. Redistributions of source code must retain the above copyright notice,
    this list of conditions and the following disclaimer.
 2. Redistributions in binary form must reproduce the above copyright
    notice, this list of conditions and the following disclaimer in the
    documentation and/or other materials provided with the distribution.
 3. Neither the name of the copyright holder nor the names of its
    contributors may be used to endorse or promote products derived from
    this software without specific prior written permission.
 .
 THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS \"AS
 IS\" AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO,
 THE IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR
 PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR
 CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL,
 EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO,
 PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR
 PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF
 LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING
 NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE OF THIS
 SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.

License: Expat
 Permission is hereby granted, free of charge, to any person obtaining a
 copy of this software and associated documentation files (the
 \"Software\"), to deal in the Software without restriction, including
 without limitation the rights to use, copy, modify, merge, publish,
 distribute, sublicense, and/or sell copies of the Software, and to permit
 persons to whom the Software is furnished to do so, subject to the
 following conditions:
 .
 The above copyright notice and this permission notice shall be included
 in all copies or substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND, EXPRESS
 OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF
 MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN
 NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
 DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
 OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE
 USE OR OTHER DEALINGS IN THE SOFTWARE.
")
# RocksDB's notices, where libtally (runtime, dev) contains the release
# RocksDB: the facts of Debian's rocksdb 7.8.3-2 source package
# (debian/copyright, README.md, LICENSE.leveldb, and the PerconaFT files'
# own headers, which debian/copyright does not list). Another version's
# may differ: read them again.
if(TALLY_ROCKSDB_BUILD STREQUAL "release" AND
   NOT TALLY_ROCKSDB_RELEASE_VERSION STREQUAL "7.8.3-2")
  message(WARNING "Packaging: the RocksDB notices in the copyright files "
    "are 7.8.3-2's; this tree has RocksDB ${TALLY_ROCKSDB_RELEASE_VERSION}: "
    "check them against its source package (cmake/Packaging.cmake)")
endif()
set(_tally_rocksdb_copyright
"
Files: rocksdb/*
Copyright: 2011-present Facebook, Inc.
 2011 The LevelDB Authors
 2013 Sanjay Ghemawat <sanjay@google.com>
 2013 Jeff Dean <jeff@google.com>
License: GPL-2 or Apache-2.0, and BSD-3-clause
Comment: RocksDB 7.8.3, Debian's source package rocksdb 7.8.3-2 with its
 patches, built in Release by tally's scripts/build_rocksdb and compiled
 into libtally. RocksDB is dual-licensed under GPLv2 and Apache 2.0, at
 the licensee's option; tally takes it under Apache-2.0, as tally's
 docs/license.md explains. Its code from LevelDB is under the BSD-3-clause
 license below (RocksDB's LICENSE.leveldb).

Files: rocksdb/utilities/transactions/lock/range/range_tree/lib/*
Copyright: 2006, 2015 Percona and/or its affiliates
License: GPL-2 or AGPL-3 or Apache-2.0
Comment: PerconaFT's lock tree, part of RocksDB's range locking; tally
 takes it under Apache-2.0.
")
set(_tally_rocksdb_licenses
"
License: GPL-2
 This program is free software; you can redistribute it and/or modify
 it under the terms of the GNU General Public License as published by
 the Free Software Foundation; under version 2 of the License.
 .
 This program is distributed in the hope that it will be useful,
 but WITHOUT ANY WARRANTY; without even the implied warranty of
 MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
 GNU General Public License for more details.
 .
 On Debian systems, the full text of the GNU General Public License version 2
 can be found in the file `/usr/share/common-licenses/GPL-2'.

License: AGPL-3
 PerconaFT is free software: you can redistribute it and/or modify
 it under the terms of the GNU Affero General Public License, version 3,
 as published by the Free Software Foundation.
 .
 PerconaFT is distributed in the hope that it will be useful,
 but WITHOUT ANY WARRANTY; without even the implied warranty of
 MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
 GNU Affero General Public License for more details.
 .
 Debian has no copy of the GNU Affero General Public License in
 /usr/share/common-licenses; it is RocksDB's
 utilities/transactions/lock/range/range_tree/lib/COPYING.AGPLv3 and
 https://www.gnu.org/licenses/agpl-3.0.html.

License: BSD-3-clause
 Copyright (c) 2011 The LevelDB Authors. All rights reserved.
 .
 Redistribution and use in source and binary forms, with or without
 modification, are permitted provided that the following conditions are
 met:
 .
    * Redistributions of source code must retain the above copyright
 notice, this list of conditions and the following disclaimer.
    * Redistributions in binary form must reproduce the above
 copyright notice, this list of conditions and the following disclaimer
 in the documentation and/or other materials provided with the
 distribution.
    * Neither the name of Google Inc. nor the names of its
 contributors may be used to endorse or promote products derived from
 this software without specific prior written permission.
 .
 THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS
 \"AS IS\" AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT
 LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR
 A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT
 OWNER OR CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL,
 SPECIAL, EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT
 LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE,
 DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY
 THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT
 (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
 OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
")
foreach(component IN LISTS CPACK_COMPONENTS_ALL)
  string(TOUPPER "${component}" upper)
  set(package "${CPACK_DEBIAN_${upper}_PACKAGE_NAME}")
  set(rocksdb_inside FALSE)
  if(TALLY_ROCKSDB_BUILD STREQUAL "release" AND
     NOT component STREQUAL "tools")
    set(rocksdb_inside TRUE)
  endif()
  set(text "${_tally_copyright}")
  if(component STREQUAL "tools")
    string(APPEND text "${_tally_tools_copyright}")
  endif()
  if(rocksdb_inside)
    string(APPEND text "${_tally_rocksdb_copyright}")
  endif()
  string(APPEND text "\n${_tally_apache}")
  if(component STREQUAL "tools")
    string(APPEND text "${_tally_tools_licenses}")
  endif()
  if(rocksdb_inside)
    string(APPEND text "${_tally_rocksdb_licenses}")
  endif()
  set(file "${PROJECT_BINARY_DIR}/packaging/${package}/copyright")
  file(CONFIGURE OUTPUT "${file}" CONTENT "${text}" @ONLY)
  install(FILES "${file}" DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/${package}"
          COMPONENT ${component} EXCLUDE_FROM_ALL)
endforeach()
unset(_tally_apache)
unset(_tally_copyright)
unset(_tally_tools_copyright)
unset(_tally_tools_licenses)
unset(_tally_rocksdb_copyright)
unset(_tally_rocksdb_licenses)

include(CPack)
