# omnilearn_add_module(name SOURCES src/a.cpp ... [PUBLIC target ...] [PRIVATE target ...]): one module's library,
# the same skeleton in every module. The target omnilearn_<name> with the alias omnilearn::<name>; its include/
# public (in the build tree and where it is installed) and its src/ private; C++20 for it and for whoever links it;
# linked to PUBLIC and PRIVATE; OmniLearn's warnings (omnilearn_warnings).
function(omnilearn_add_module name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;PUBLIC;PRIVATE")
  if(NOT arg_SOURCES OR arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "omnilearn_add_module(${name}): expected SOURCES, PUBLIC and PRIVATE lists only")
  endif()
  set(target omnilearn_${name})
  add_library(${target} ${arg_SOURCES})
  add_library(omnilearn::${name} ALIAS ${target})
  target_include_directories(${target}
    PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE src)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_link_libraries(${target} PUBLIC ${arg_PUBLIC} PRIVATE ${arg_PRIVATE})
  omnilearn_warnings(${target})
endfunction()
