function(redlock_warnings target)
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic
        $<$<BOOL:${REDLOCK_WARNINGS_AS_ERRORS}>:-Werror>)
endfunction()
