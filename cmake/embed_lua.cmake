# Turns lua/*.lua into a C++ source holding each script's text and SHA1, so that
# EVALSHA uses the digest of exactly the bytes that EVAL would send.
# Inputs: OUTPUT (path of the .cpp), SCRIPTS (list of .lua paths).
set(body "// Generated from lua/*.lua by cmake/embed_lua.cmake. Do not edit.\n")
string(APPEND body "#include \"transport/scripts.hpp\"\n\nnamespace redlock::detail {\n")
foreach(script IN LISTS SCRIPTS)
    get_filename_component(name "${script}" NAME_WE)
    file(READ "${script}" text)
    file(SHA1 "${script}" digest)
    string(FIND "${text}" ")lua_script\"" clash)
    if(NOT clash EQUAL -1)
        message(FATAL_ERROR "${script} contains the raw-string delimiter")
    endif()
    string(APPEND body "\nconst script ${name}_script{\n    R\"lua_script(${text})lua_script\",\n    \"${digest}\"};\n")
endforeach()
string(APPEND body "\n} // namespace redlock::detail\n")
file(WRITE "${OUTPUT}.tmp" "${body}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
