# Checks the layering of a component that is one library in folders
# (models/, collector/), by its includes (cmake -P):
#   cmake -DSOURCE_DIR=<dir> -DINCLUDE_PREFIX=<i> -DLAYERS=<layers> -P check_folder_layers.cmake
#
# LAYERS: the layers, lowest first, separated by ';' (or '|', which a test's
# COMMAND line keeps); a layer names one or more top-level folders of
# SOURCE_DIR, separated by spaces, and "." stands for the files at its root.
# A file (any .h, .cc or .inc under a folder, at any depth; tests, *_test.cc,
# may use anything) may include "<INCLUDE_PREFIX>X..." only where X is its
# own top-level folder or one of a lower layer: never one beside it (two
# domains of models/ never include each other), never one above. Every
# top-level folder with sources must be in LAYERS, so that a new folder
# cannot escape the rule. Exits with an error that lists every offence.
# cmake/check_layers.cmake does the same, with link edges, for components
# made of one library per folder (core/, reporter/).
foreach(var SOURCE_DIR INCLUDE_PREFIX LAYERS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_folder_layers.cmake: -D${var}=... is required")
  endif()
endforeach()
string(REPLACE "|" ";" LAYERS "${LAYERS}")

include(${CMAKE_CURRENT_LIST_DIR}/layers_common.cmake)
tg_layer_ranks()

# The top-level folder of a path relative to SOURCE_DIR ("." for a root file).
function(top_of path out)
  if(path MATCHES "^([^/]+)/")
    set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
  else()
    set(${out} "." PARENT_SCOPE)
  endif()
endfunction()

set(errors "")
set(includes 0)
file(GLOB_RECURSE sources RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/*.h ${SOURCE_DIR}/*.cc ${SOURCE_DIR}/*.inc)
list(FILTER sources EXCLUDE REGEX "_test\\.cc$")
foreach(source IN LISTS sources)
  top_of(${source} from)
  if(NOT DEFINED rank_${from})
    list(APPEND errors "${source}: its folder ${from}/ is missing from the layers")
    continue()
  endif()
  file(STRINGS ${SOURCE_DIR}/${source} lines REGEX "^[ \t]*#[ \t]*include[ \t]+\"${INCLUDE_PREFIX}")
  foreach(line IN LISTS lines)
    math(EXPR includes "${includes} + 1")
    string(REGEX REPLACE "^[^\"]*\"${INCLUDE_PREFIX}([^\"]+)\".*$" "\\1" target "${line}")
    top_of(${target} to)
    if(to STREQUAL from)
      continue()
    endif()
    tg_check_use(${from} ${to} "${source}: ${line}")
  endforeach()
endforeach()

tg_layers_verdict("${includes} includes point down or stay in their folder")
