# What the two layer checks share (included by cmake/check_layers.cmake and
# cmake/check_folder_layers.cmake, both run with cmake -P).

# From LAYERS (lowest first; a layer names one or more folders, separated by
# spaces): rank_<folder> for each, `folders` in order, and `order_text`
# ("a < b, c < d") for the messages.
macro(tg_layer_ranks)
  set(rank 0)
  set(folders "")
  set(order "")
  foreach(layer IN LISTS LAYERS)
    separate_arguments(names UNIX_COMMAND "${layer}")
    foreach(name IN LISTS names)
      set(rank_${name} ${rank})
      list(APPEND folders ${name})
    endforeach()
    list(JOIN names ", " names_text)
    list(APPEND order "${names_text}")
    math(EXPR rank "${rank} + 1")
  endforeach()
  list(JOIN order " < " order_text)
endmacro()

# Appends to `errors` where folder `from` may not use folder `to`: one not
# in the layering, or not below `from`. `what` names the use.
macro(tg_check_use from to what)
  if(NOT DEFINED rank_${to})
    list(APPEND errors "${what}: ${to} is not in the layering")
  elseif(NOT rank_${to} LESS rank_${from})
    list(APPEND errors "${what}: ${to} is not below ${from}")
  endif()
endmacro()

# Fails listing `errors` if any; else prints `summary`.
macro(tg_layers_verdict summary)
  if(errors)
    list(JOIN errors "\n  " text)
    message(FATAL_ERROR "The layering ${order_text} is broken:\n  ${text}")
  endif()
  message(STATUS "Layering ${order_text}: ${summary}")
endmacro()
