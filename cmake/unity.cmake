# Unity builds (CMAKE_UNITY_BUILD): the main build's (tools/bootstrap.sh, on
# unless TORCHGAUGE_UNITY=OFF) and the sanitizer tree's (tests/fuzz/clang_build.sh).
# Each .cc of a family includes <torch/torch.h>'s precompiled header and then
# instantiates and optimises the same LibTorch inline code as its neighbours;
# compiled together, they do it once. Measured 2026-11-29, clang 14, Release,
# on 2 cores: the eight files of models/vision/classification from resnet.cc
# to vovnet.cc took 92 s of compile time one by one and 24 s as one unit.

# Most targets are grouped by tools/unity_groups.py (below); these files define a
# file-local name that another file of their target also defines, or (the
# integration tests' parity_main.cc) implement doctest, so each compiles on
# its own.
function(torchgauge_unity_exclusions)
  # Each file with the folder whose CMakeLists.txt defines its target.
  foreach(pair core/shard/shard_merge_test.cc:core reporter/results/triage_test.cc:reporter
               reporter/results/v3_export_test.cc:reporter reporter/compare/report.cc:reporter/compare
               reporter/pages/regressions_page.cc:reporter/pages reporter/paper/tables.cc:reporter/paper
               reporter/site/alerts_site_test.cc:reporter tests/parity/parity_main.cc:tests)
    string(REPLACE ":" ";" pair ${pair})
    list(GET pair 0 file)
    list(GET pair 1 scope)
    set_source_files_properties(${CMAKE_SOURCE_DIR}/${file} DIRECTORY ${CMAKE_SOURCE_DIR}/${scope}
                                PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  endforeach()
endfunction()

# The model families and their parity tests are many files written alike,
# and share file-local names (kLr, MakeLayerNorm, EncoderImpl, ...), and so
# do the tests of core and the reporter: their units are chosen by
# tools/unity_groups.py so that no unit holds one name twice, in units no
# larger than CMake's batches.
function(torchgauge_unity_groups)
  set(lines "")
  foreach(target ${ARGN})
    if(NOT TARGET ${target})
      continue()
    endif()
    get_target_property(sources ${target} SOURCES)
    get_target_property(source_dir ${target} SOURCE_DIR)
    foreach(src ${sources})
      if(src MATCHES "\\.cc$")
        cmake_path(ABSOLUTE_PATH src BASE_DIRECTORY ${source_dir})
        # Generated sources do not exist yet at configure time: they compile alone.
        cmake_path(IS_PREFIX CMAKE_BINARY_DIR ${src} generated)
        if(NOT generated)
          string(APPEND lines "${target}\t${src}\n")
        endif()
      endif()
    endforeach()
  endforeach()
  if(NOT lines)
    return()  # none of them in this tree (the sanitizer tree has no LibTorch)
  endif()
  set(in ${CMAKE_BINARY_DIR}/unity_groups.in)
  set(out ${CMAKE_BINARY_DIR}/unity_groups.txt)
  file(WRITE ${in} "${lines}")
  set(py ${TORCHGAUGE_PYTHON})
  if(NOT py)
    find_program(py NAMES python3 REQUIRED)
  endif()
  execute_process(COMMAND ${py} ${CMAKE_SOURCE_DIR}/tools/unity_groups.py --in ${in} --out ${out}
                          --batch ${CMAKE_UNITY_BUILD_BATCH_SIZE}
                          --root ${CMAKE_SOURCE_DIR}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "tools/unity_groups.py failed (${rc}): ${err}")
  endif()
  # A new or removed file reconfigures (the globs' CONFIGURE_DEPENDS); so does
  # a change to the grouping.
  set_property(DIRECTORY ${CMAKE_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               ${CMAKE_SOURCE_DIR}/tools/unity_groups.py)
  file(STRINGS ${out} grouped)
  foreach(target ${ARGN})
    if(TARGET ${target})
      set_target_properties(${target} PROPERTIES UNITY_BUILD_MODE GROUP)
    endif()
  endforeach()
  foreach(line ${grouped})
    string(REPLACE "\t" ";" parts "${line}")
    list(GET parts 0 target)
    list(GET parts 1 group)
    list(GET parts 2 src)
    get_target_property(source_dir ${target} SOURCE_DIR)
    set_source_files_properties(${src} DIRECTORY ${source_dir} PROPERTIES UNITY_GROUP ${group})
  endforeach()
endfunction()
