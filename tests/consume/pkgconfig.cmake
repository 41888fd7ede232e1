# Run by the consume.pkgconfig test (cmake -P): compiles app.c against the installed sla with
# `pkg-config --cflags --libs sla` found through PKG_CONFIG_PATH, then runs it.
#   -DPREFIX=<install prefix> -DLIBDIR=<lib dir relative to it> -DSRC=<this folder>
#   -DOUT=<scratch folder> -DCC=<C compiler> -DEXTRA_FLAGS=<flags, e.g. sanitizers>
set(ENV{PKG_CONFIG_PATH} "${PREFIX}/${LIBDIR}/pkgconfig")
foreach(what cflags libs)
  execute_process(COMMAND pkg-config --${what} sla RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config --${what} sla failed: ${err}")
  endif()
  separate_arguments(${what} UNIX_COMMAND "${out}")
endforeach()
execute_process(COMMAND pkg-config --variable=libdir sla OUTPUT_VARIABLE libdir
                OUTPUT_STRIP_TRAILING_WHITESPACE)
# the paths must point into the prefix the files were installed to, not the configure-time one
get_filename_component(libdir_real "${libdir}" REALPATH)
get_filename_component(want_real "${PREFIX}/${LIBDIR}" REALPATH)
if(NOT libdir_real STREQUAL want_real)
  message(FATAL_ERROR "pkg-config libdir '${libdir}' is not the install's '${PREFIX}/${LIBDIR}'")
endif()
file(MAKE_DIRECTORY "${OUT}")
separate_arguments(extra UNIX_COMMAND "${EXTRA_FLAGS}")
execute_process(COMMAND ${CC} ${extra} ${cflags} "${SRC}/app.c" -o "${OUT}/app_pkgconfig"
                        ${libs} -lm "-Wl,-rpath,${libdir}"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compiling with pkg-config flags (${cflags} ${libs}) failed:\n${err}")
endif()
execute_process(COMMAND "${OUT}/app_pkgconfig" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message(STATUS "${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the program built with pkg-config failed (${rc})")
endif()
