# omnilearn_warnings(target): the warning set for OmniLearn's own code (never applied to third-party code).
function(omnilearn_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wold-style-cast)
  if(OMNILEARN_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
