# Makes redlock(1) from the program itself (cmake -P, at build time): help2man turns
# `redlock --help` and `--version` into the page, and each subcommand's own help
# (`redlock help SUBCOMMAND`, found in the overview's usage lines) becomes a section of it, so
# that the page never says something else than the program.
# Inputs: CLI (the redlock binary), HELP2MAN, OUTPUT (the .1.gz to write).
cmake_minimum_required(VERSION 3.20)
execute_process(COMMAND ${CLI} --help OUTPUT_VARIABLE overview RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "redlock --help failed (${rc})")
endif()
string(REGEX MATCHALL "\n  redlock [a-z]+ \\[options\\]" usages "${overview}")
set(include "[SUBCOMMANDS]\n")
foreach(usage IN LISTS usages)
    string(REGEX REPLACE "\n  redlock ([a-z]+) .*" "\\1" command "${usage}")
    execute_process(COMMAND ${CLI} help ${command} OUTPUT_VARIABLE text RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "redlock help ${command} failed (${rc})")
    endif()
    # Verbatim in roff: a backslash is \e, and a line may not start a request.
    string(REPLACE "\\" "\\e" text "${text}")
    string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
    string(APPEND include ".SS \"redlock ${command}\"\n.nf\n${text}.fi\n")
endforeach()
get_filename_component(dir ${OUTPUT} DIRECTORY)
string(REGEX REPLACE "\\.gz$" "" page ${OUTPUT})
file(WRITE ${dir}/redlock.h2m "${include}")
execute_process(
    COMMAND ${HELP2MAN} --no-info --section=1 --include=${dir}/redlock.h2m
            "--name=run a command under a Redlock distributed lock, or take, renew and release one"
            --output=${page} ${CLI}
    RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "help2man failed (${rc})")
endif()
execute_process(COMMAND gzip -9nf ${page} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip ${page} failed (${rc})")
endif()
