# omnilearn_warnings(target): the warning set for OmniLearn's own code (never applied to third-party code).
function(omnilearn_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wold-style-cast)
  # GCC 12 reports false -Wrestrict errors inside std::string's operator+ at -O3 (GCC bug 105651).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(OMNILEARN_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
