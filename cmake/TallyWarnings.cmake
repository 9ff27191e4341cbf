# Compiler warnings for tally's own targets, set per target.
#
# tally_set_warnings(TARGET): -Wall -Wextra; -Werror with
# TALLY_WARNINGS_AS_ERRORS (CI); and with clang, -Wthread-safety, which checks
# the lock annotations of util/thread_annotations.h (every lock is one of
# util/mutex.h's). CI's clang build (the fuzz build of scripts/dev, -Werror)
# compiles the whole library, so a field read without its lock fails CI.
function(tally_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  if(TALLY_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(${target} PRIVATE -Wthread-safety)
  endif()
endfunction()

# The targets defined in DIR and the directories below it, into OUT.
function(tally_targets_below dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    tally_targets_below(${sub} below)
    list(APPEND targets ${below})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# tally_set_warnings on every target that compiles code, defined in DIR or
# below (called once, at the end of the top-level CMakeLists.txt, so a new
# target gets the warnings without a line of its own).
function(tally_set_warnings_everywhere dir)
  tally_targets_below(${dir} targets)
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
      tally_set_warnings(${t})
    endif()
  endforeach()
endfunction()
