# What `cmake --install` puts where (docs/embedding.md), by component:
#   runtime  libtally.so.<VERSION> and its SONAME link
#   dev      the headers, libtally.so (the link-time name), libtally.a, the
#            CMake package (find_package(tally)) and the pkg-config files
#            tally.pc (C++) and tally-c.pc (C, tally/c.h)
#   tools    counterctl, its man page and shell completions (tools/)
include(CMakePackageConfigHelpers)

install(DIRECTORY include/tally DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT dev FILES_MATCHING PATTERN "*.h" PATTERN "*.h.in" EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/include/tally/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tally COMPONENT dev)

set(TALLY_INSTALLED_TARGETS tally_static)
if(TALLY_BUILD_SHARED)
  list(APPEND TALLY_INSTALLED_TARGETS tally)
endif()
install(TARGETS ${TALLY_INSTALLED_TARGETS} EXPORT tallyTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          COMPONENT runtime NAMELINK_COMPONENT dev
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# With the release RocksDB (TALLY_ROCKSDB_BUILD=release) the installed
# libtally.a holds RocksDB's objects too: the archive in this machine's
# cache is no file a consumer has. The rule below, after the one above,
# installs in its place libtally-rocksdb/libtally.a, tally's archive and
# librocksdb.a merged (cmake/MergeArchives.cmake), built with the library;
# the export above names RocksDB's compression libraries in its stead
# (cmake/TallyLibrary.cmake).
if(TALLY_ROCKSDB_BUILD STREQUAL "release")
  set(_merged ${PROJECT_BINARY_DIR}/libtally-rocksdb/libtally.a)
  add_custom_command(OUTPUT ${_merged}
    COMMAND ${CMAKE_COMMAND} -DAR=${CMAKE_AR} -DOUTPUT=${_merged}
      "-DINPUTS=$<TARGET_FILE:tally_static>;${TALLY_ROCKSDB_RELEASE_ARCHIVE}"
      -P ${PROJECT_SOURCE_DIR}/cmake/MergeArchives.cmake
    DEPENDS tally_static ${TALLY_ROCKSDB_RELEASE_ARCHIVE}
      ${PROJECT_SOURCE_DIR}/cmake/MergeArchives.cmake
    COMMENT "libtally.a with the release RocksDB, for the install"
    VERBATIM)
  add_custom_target(tally_static_with_rocksdb ALL DEPENDS ${_merged})
  install(FILES ${_merged} DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
  unset(_merged)
endif()
install(EXPORT tallyTargets NAMESPACE tally::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tally COMPONENT dev)
configure_package_config_file(cmake/tallyConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tallyConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tally)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tallyConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tallyConfig.cmake
              ${PROJECT_BINARY_DIR}/tallyConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tally COMPONENT dev)

# pkg-config, in two variants: with the shared library installed, `-ltally`
# links it and RocksDB stays private (--static adds it); a static-only
# install (TALLY_BUILD_SHARED off) must name RocksDB, the C++ runtime and
# threads on every link. Both are generated (tests/install/check_install.sh
# links with each); the one matching this build is installed. Relocatable:
# the prefix is found from the file's own place. RocksDB is Debian's
# (Requires rocksdb) or, with the release RocksDB, inside libtally.a, which
# then names RocksDB's own libraries (-lsnappy ... -ldl).
file(RELATIVE_PATH TALLY_PC_PREFIX_REL
     "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
string(REGEX REPLACE "/$" "" TALLY_PC_PREFIX_REL "${TALLY_PC_PREFIX_REL}")
if(TALLY_ROCKSDB_BUILD STREQUAL "release")
  set(_pc_rocksdb_module "")
  list(TRANSFORM TALLY_ROCKSDB_RELEASE_LIBS PREPEND "-l"
       OUTPUT_VARIABLE _pc_rocksdb_libs)
  string(JOIN " " _pc_rocksdb_libs "" ${_pc_rocksdb_libs})
else()
  set(_pc_rocksdb_module "rocksdb")
  set(_pc_rocksdb_libs "")
endif()
foreach(variant shared static)
  if(variant STREQUAL "shared")
    set(TALLY_PC_REQUIRES "")
    set(TALLY_PC_REQUIRES_PRIVATE "${_pc_rocksdb_module}")
    set(TALLY_PC_LIBS "-ltally")
    set(TALLY_PC_LIBS_PRIVATE "-lhiredis${_pc_rocksdb_libs} -pthread")
    set(TALLY_PC_C_LIBS "-ltally")
    set(TALLY_PC_C_LIBS_PRIVATE
        "-lhiredis${_pc_rocksdb_libs} -lstdc++ -lm -pthread")
  else()
    set(TALLY_PC_REQUIRES "${_pc_rocksdb_module}")
    set(TALLY_PC_REQUIRES_PRIVATE "")
    set(TALLY_PC_LIBS "-ltally -lhiredis${_pc_rocksdb_libs} -pthread")
    set(TALLY_PC_LIBS_PRIVATE "")
    set(TALLY_PC_C_LIBS
        "-ltally -lhiredis${_pc_rocksdb_libs} -lstdc++ -lm -pthread")
    set(TALLY_PC_C_LIBS_PRIVATE "")
  endif()
  foreach(pc tally tally-c)
    configure_file(cmake/${pc}.pc.in
                   ${PROJECT_BINARY_DIR}/pkgconfig/${variant}/${pc}.pc @ONLY)
  endforeach()
endforeach()
if(TALLY_BUILD_SHARED)
  set(TALLY_PC_INSTALLED shared)
else()
  set(TALLY_PC_INSTALLED static)
endif()
unset(_pc_rocksdb_module)
unset(_pc_rocksdb_libs)
install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${TALLY_PC_INSTALLED}/tally.pc
              ${PROJECT_BINARY_DIR}/pkgconfig/${TALLY_PC_INSTALLED}/tally-c.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
