# Sanitizers and fuzzing (clang only).
#
# Two roles, chosen by the options:
#  - In a clang build of the LibTorch-free parts (TORCHGAUGE_SANITIZE and/or
#    TORCHGAUGE_FUZZ, with TORCHGAUGE_WITH_TORCH=OFF), every target is built
#    with ASan + UBSan and the fuzz targets of tests/fuzz are added. That
#    build's own ctest runs core's and the reporter's tests under the
#    sanitizers, and the fuzzers (labels fuzz and bench).
#  - In the main build (TORCHGAUGE_CLANG_CHECKS, the default), tests that
#    configure, build and run that clang build in <build>/sanitize, so the
#    one ctest build (and `./gauge test`) holds the sanitizer job and the
#    fuzzers, and CI builds the clang tree once for both.

option(TORCHGAUGE_SANITIZE "Build everything with ASan + UBSan (clang, no LibTorch)" OFF)
option(TORCHGAUGE_FUZZ "Add the libFuzzer targets in tests/fuzz (clang; implies the sanitizers)" OFF)
option(TORCHGAUGE_CLANG_CHECKS "Register the tests that drive the clang sanitizer/fuzz build in <build>/sanitize" ON)

if(TORCHGAUGE_SANITIZE OR TORCHGAUGE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "TORCHGAUGE_SANITIZE/TORCHGAUGE_FUZZ need clang (-DCMAKE_CXX_COMPILER=clang++), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  if(TORCHGAUGE_WITH_TORCH)
    # LibTorch's prebuilt libraries are not instrumented; mixing them with
    # ASan gives false reports. The sanitizer build covers the rest.
    message(FATAL_ERROR "TORCHGAUGE_SANITIZE/TORCHGAUGE_FUZZ need -DTORCHGAUGE_WITH_TORCH=OFF")
  endif()
  # -fno-sanitize-recover: a UBSan report fails the test instead of scrolling by.
  set(TORCHGAUGE_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_compile_options(${TORCHGAUGE_SANITIZER_FLAGS})
  add_link_options(${TORCHGAUGE_SANITIZER_FLAGS})
  if(TORCHGAUGE_FUZZ)
    # Coverage feedback from the libraries too, not only the fuzz entry points.
    add_compile_options(-fsanitize=fuzzer-no-link)
  endif()
  set(TORCHGAUGE_CLANG_CHECKS OFF)  # this is the clang build; no nested one
endif()

# Registers the tests of the main build that drive the clang build.
function(torchgauge_add_clang_checks)
  set(dir ${CMAKE_BINARY_DIR}/sanitize)
  set(script ${CMAKE_SOURCE_DIR}/tests/fuzz/clang_build.sh)
  # sanitize_build configures and builds once; the others need it (a ctest
  # fixture, so `ctest -L fuzz` or `-L unit` pulls it in).
  add_test(NAME sanitize_build
           COMMAND bash ${script} ${CMAKE_SOURCE_DIR} ${dir} "${TORCHGAUGE_PYTHON}" "${TORCHGAUGE_DEPS_DIR}")
  # COST: ctest starts it first, beside oldest_release_test (the other long
  # build), so the rest of the tests run beside whichever ends first. It ran
  # alone (RUN_SERIAL) until 2026-11-29: the CI then waited for it (1,425 s)
  # before starting oldest_release_test, and the two builds ran one after the
  # other. The tests that time something are RUN_SERIAL themselves.
  set_tests_properties(sanitize_build PROPERTIES LABELS sanitize TIMEOUT 2400 FIXTURES_SETUP clang_build COST 9000)
  # The nested ctest runs one label each: the main build's label selection
  # then means the same thing for the sanitized tests. --no-tests=error: a
  # label that matched nothing there (a renamed label, a test left out of the
  # clang build) fails instead of passing with no test run.
  # sanitized_ctest.sh raises the stack limit that build's -O0 frames need.
  set(run bash ${CMAKE_SOURCE_DIR}/tests/fuzz/sanitized_ctest.sh ${CMAKE_CTEST_COMMAND} --test-dir ${dir})
  foreach(label unit integration fuzz)
    add_test(NAME sanitize_${label} COMMAND ${run} -L ^${label}$ --no-tests=error --output-on-failure)
    set_tests_properties(sanitize_${label} PROPERTIES LABELS "${label};sanitize" TIMEOUT 900
                         FIXTURES_REQUIRED clang_build)
  endforeach()
  add_test(NAME sanitize_fuzz_bench COMMAND ${run} -L ^bench$ -R ^fuzz_ --no-tests=error --output-on-failure -V)
  set_tests_properties(sanitize_fuzz_bench PROPERTIES LABELS "bench;sanitize" TIMEOUT 7200
                       FIXTURES_REQUIRED clang_build)
endfunction()
