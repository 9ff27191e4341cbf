# libtally: the shared and the static library, from one set of objects
# compiled once with hidden visibility (docs/embedding.md).
#
#   tally         libtally.so.<SOVERSION>, exporting the TALLY_EXPORT
#                 declarations only (include/tally/export.h), RocksDB and
#                 FlatBuffers linked privately; the target tools, examples
#                 and users of the build tree link. With TALLY_BUILD_SHARED
#                 off, the static library under this name.
#   tally_static  libtally.a, the same code; what tests, fuzzers and
#                 benchmarks link (through tally_internal), since they
#                 reach hidden internals.
set(TALLY_LIBRARY_OBJECTS
  $<TARGET_OBJECTS:tally_api>
  $<TARGET_OBJECTS:tally_engine>
  $<TARGET_OBJECTS:tally_cluster>
  $<TARGET_OBJECTS:tally_cluster_client>
  $<TARGET_OBJECTS:tally_c>
  $<TARGET_OBJECTS:tally_core>
  $<TARGET_OBJECTS:tally_schema>
  $<TARGET_OBJECTS:tally_wal>
  $<TARGET_OBJECTS:tally_util>
  $<TARGET_OBJECTS:tally_status>)

# The ABI policy (docs/embedding.md, "ABI"): the SONAME names the major
# version once tally is 1.0; before that every minor release may change the
# ABI, so it names major.minor (libtally.so.0.1).
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(TALLY_SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
else()
  set(TALLY_SOVERSION ${PROJECT_VERSION_MAJOR})
endif()

function(tally_library_common target)
  add_dependencies(${target} tally_schema_gen)
  # Consumers compile against the public headers as C++17 at least.
  target_compile_features(${target} PUBLIC cxx_std_17)
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  # RocksDB is private: no public header names it (scripts/check_layout);
  # a static libtally still carries it to the consumer's link line
  # (CMake's $<LINK_ONLY:...>), a shared one has it as DT_NEEDED.
  # hiredis likewise, by its plain name (-lhiredis): what the installed
  # package's consumers need too (pkg-config and tallyConfig.cmake).
  # The release RocksDB is an archive of this build machine's cache: the
  # shared library contains it; the installed libtally.a holds its objects
  # (cmake/TallyInstall.cmake), so the installed export names the libraries
  # RocksDB needs instead of it.
  if(TALLY_ROCKSDB_BUILD STREQUAL "release")
    set(rocksdb "$<BUILD_INTERFACE:${TALLY_ROCKSDB}>")
    foreach(lib IN LISTS TALLY_ROCKSDB_RELEASE_LIBS)
      list(APPEND rocksdb "$<INSTALL_INTERFACE:${lib}>")
    endforeach()
  else()
    set(rocksdb ${TALLY_ROCKSDB})
  endif()
  target_link_libraries(${target} PUBLIC Threads::Threads
                        PRIVATE ${rocksdb} hiredis)
  set_target_properties(${target} PROPERTIES OUTPUT_NAME tally)
endfunction()

add_library(tally_static STATIC ${TALLY_LIBRARY_OBJECTS})
tally_library_common(tally_static)

if(TALLY_BUILD_SHARED)
  add_library(tally SHARED ${TALLY_LIBRARY_OBJECTS})
  tally_library_common(tally)
  set_target_properties(tally PROPERTIES
    VERSION ${PROJECT_VERSION} SOVERSION ${TALLY_SOVERSION}
    LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/tally.map)
  # Exports: what tally/export.h marks, and not the standard library's
  # template instantiations either (cmake/tally.map).
  target_link_options(tally PRIVATE
    -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/tally.map)
  # Every symbol the library needs is resolved at its own link (a missing
  # dependency fails here, not in a user's program). Not with sanitizers,
  # whose runtime the executable brings.
  if(NOT TALLY_WITH_ASAN AND NOT TALLY_WITH_TSAN AND NOT TALLY_BUILD_FUZZERS)
    target_link_options(tally PRIVATE -Wl,--no-undefined)
  endif()
  set(TALLY_LIBRARY tally)
else()
  set(TALLY_LIBRARY tally_static)
endif()
add_library(tally::tally ALIAS ${TALLY_LIBRARY})
