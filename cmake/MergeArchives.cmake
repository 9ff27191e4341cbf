# cmake -DAR=ar -DOUTPUT=out.a -DINPUTS="a.a;b.a" -P MergeArchives.cmake:
# writes OUTPUT, a static archive holding every member of every INPUTS
# archive, in order, with its symbol index. What the installed libtally.a
# is made of with the release RocksDB (cmake/TallyInstall.cmake).
#
# GNU ar's MRI script (ar -M, ADDLIB) copies the members as they are:
# extracting them (ar x) would lose some, since one archive may hold two
# members of one name (librocksdb.a has two format.cc.o). MRI cannot
# quote a file name, so a path with a character its parser reserves is
# refused by name here rather than misread.
foreach(var AR OUTPUT INPUTS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "MergeArchives.cmake: -D${var}=... missing")
  endif()
endforeach()
set(script "CREATE ${OUTPUT}.tmp\n")
foreach(path IN LISTS OUTPUT INPUTS)
  if(path MATCHES "[ \t,+*()'\"]")
    message(FATAL_ERROR "MergeArchives.cmake: '${path}' holds a character "
      "ar's MRI scripts cannot name (a space, , + * ( ) or a quote): "
      "use a build directory without it")
  endif()
endforeach()
foreach(input IN LISTS INPUTS)
  if(NOT EXISTS "${input}")
    message(FATAL_ERROR "MergeArchives.cmake: no archive ${input}")
  endif()
  string(APPEND script "ADDLIB ${input}\n")
endforeach()
string(APPEND script "SAVE\nEND\n")
file(REMOVE "${OUTPUT}.tmp")
file(WRITE "${OUTPUT}.mri" "${script}")
execute_process(COMMAND "${AR}" -M INPUT_FILE "${OUTPUT}.mri"
                RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "MergeArchives.cmake: ${AR} -M <${OUTPUT}.mri failed "
    "(${failed})")
endif()
# The symbol index over all the members (ar s, as ranlib).
execute_process(COMMAND "${AR}" s "${OUTPUT}.tmp" RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "MergeArchives.cmake: ${AR} s ${OUTPUT}.tmp failed")
endif()
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
