# Checks that a component's libraries keep their layering (cmake -P):
#   cmake -DLAYERS_FILE=<file> -DSOURCE_DIR=<dir> -DTARGET_PREFIX=<p> -DINCLUDE_PREFIX=<i> -P check_layers.cmake
#
# LAYERS_FILE (written by file(GENERATE) in the component's CMakeLists.txt,
# so every target_link_libraries call is in it) sets
#   LAYERS         the layers, lowest first; a layer names one or more
#                  libraries by folder, separated by spaces;
#   LINKS_<folder> the LINK_LIBRARIES of <TARGET_PREFIX><folder>.
# A library may use only libraries of a lower layer: none above it, none
# beside it, itself never. Every edge then points down, so the graph has no
# cycle. Two things are checked against that rule:
#   - the link graph: each <TARGET_PREFIX>X in LINKS_<folder>;
#   - the includes: each #include "<INCLUDE_PREFIX>X/..." in the folder's
#     sources other than its tests (*_test.cc), which may use any library,
#     and no include of a file at the component's root, which has no library.
# Also: every folder of SOURCE_DIR with a CMakeLists.txt must be in LAYERS.
# Exits with an error that lists every offence; prints the order otherwise.
foreach(var LAYERS_FILE SOURCE_DIR TARGET_PREFIX INCLUDE_PREFIX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_layers.cmake: -D${var}=... is required")
  endif()
endforeach()
include(${LAYERS_FILE})

include(${CMAKE_CURRENT_LIST_DIR}/layers_common.cmake)
tg_layer_ranks()

set(errors "")

file(GLOB entries LIST_DIRECTORIES true RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/*)
foreach(entry IN LISTS entries)
  if(IS_DIRECTORY ${SOURCE_DIR}/${entry} AND EXISTS ${SOURCE_DIR}/${entry}/CMakeLists.txt
     AND NOT DEFINED rank_${entry})
    list(APPEND errors "${entry}/ is a library missing from the layers")
  endif()
endforeach()

set(edges 0)
set(includes 0)
foreach(folder IN LISTS folders)
  # The link graph. A private dependency of a static library may come back
  # as $<LINK_ONLY:x>; x is the edge.
  foreach(item IN LISTS LINKS_${folder})
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" item "${item}")
    if(item MATCHES "^${TARGET_PREFIX}(.+)$")
      math(EXPR edges "${edges} + 1")
      tg_check_use(${folder} ${CMAKE_MATCH_1} "${TARGET_PREFIX}${folder} links ${item}")
    endif()
  endforeach()
  # The includes of the library's own sources.
  file(GLOB sources RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/${folder}/*.h ${SOURCE_DIR}/${folder}/*.cc)
  list(FILTER sources EXCLUDE REGEX "_test\\.cc$")
  foreach(source IN LISTS sources)
    file(STRINGS ${SOURCE_DIR}/${source} lines REGEX "^[ \t]*#[ \t]*include[ \t]+\"${INCLUDE_PREFIX}")
    foreach(line IN LISTS lines)
      math(EXPR includes "${includes} + 1")
      if(line MATCHES "\"${INCLUDE_PREFIX}([^/\"]+)/[^\"]+\"")
        if(NOT CMAKE_MATCH_1 STREQUAL folder)
          tg_check_use(${folder} ${CMAKE_MATCH_1} "${source}: ${line}")
        endif()
      else()
        list(APPEND errors "${source}: ${line}: a file outside every library")
      endif()
    endforeach()
  endforeach()
endforeach()

tg_layers_verdict("${edges} link edges and ${includes} includes point down")
