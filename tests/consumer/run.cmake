# The packaging tests: tests/consumer built and run against redlock as its users get it.
#   package       `cmake --install` of the build tree; find_package(redlock)
#   dependencies  the same install; find_package(redlock QUIET) with hiredis hidden reports
#                 "not found" without failing, and finds hiredis as a CMake package (hiredis 1.x)
#   subdirectory  add_subdirectory(redlock), optimised: no CLI, tests or install rules of
#                 redlock's, and no warning from its sources
#   deb           `cpack -G DEB`: redlock (CLI, man page) and redlock-dev, their Depends and
#                 copyright files, unpacked with `dpkg -x`: find_package, plain pkg-config,
#                 the CLI's --version, `man redlock`
#   shared        redlock configured with BUILD_SHARED_LIBS=ON (library only): SONAME, exported
#                 symbols, find_package without hiredis
# Inputs: MODE, SOURCE_DIR (redlock), BUILD_DIR (its build tree), WORK (scratch), BUILD_TYPE,
# CXX (compiler), CPACK (cpack command), HIREDIS_LIBRARY and HIREDIS_INCLUDE_DIR (dependencies).
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

# Runs a command; stops the test with its output if it fails. Its output goes to `output`.
function(step name)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "consumer.${MODE}: ${name} failed (${rc}):\n${out}")
    endif()
    set(output "${out}" PARENT_SCOPE)
endfunction()

function(expect name text pattern)
    if(NOT text MATCHES "${pattern}")
        message(FATAL_ERROR "consumer.${MODE}: ${name}: expected /${pattern}/ in:\n${text}")
    endif()
endfunction()

# Where redlock gets compiled again (subdirectory, shared), only to see how it is put
# together: unoptimised and without debug information, twice as fast to build.
set(BUILD_TYPE_OF_REBUILD "")
set(consumer_build_type ${BUILD_TYPE})

function(configure_consumer dir mode)
    step("configure (${dir})" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${dir}
         -DREDLOCK_CONSUMER_MODE=${mode} -DCMAKE_BUILD_TYPE=${consumer_build_type}
         -DCMAKE_CXX_COMPILER=${CXX} ${ARGN})
    set(output "${output}" PARENT_SCOPE)
endfunction()

# Configures, builds and runs the consumer in `dir`.
function(consumer dir mode)
    configure_consumer(${dir} ${mode} ${ARGN})
    step("build (${dir})" ${CMAKE_COMMAND} --build ${dir} -j2)
    step("run (${dir})" ${dir}/consumer)
endfunction()

function(install_build_tree prefix)
    step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
endfunction()

# The one file under `root` named `name`.
function(find_one var root name)
    file(GLOB_RECURSE found ${root}/*/${name})
    list(LENGTH found count)
    if(NOT count EQUAL 1)
        message(FATAL_ERROR "consumer.${MODE}: expected one ${name} under ${root}, found: ${found}")
    endif()
    set(${var} ${found} PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "package")
    install_build_tree(${WORK}/prefix)
    foreach(file IN ITEMS include/redlock/redlock.hpp include/redlock/export.hpp
                          share/doc/redlock/LICENSE)
        if(NOT EXISTS ${WORK}/prefix/${file})
            message(FATAL_ERROR "consumer.package: ${file} not installed")
        endif()
    endforeach()
    consumer(${WORK}/build package -DCMAKE_PREFIX_PATH=${WORK}/prefix)

elseif(MODE STREQUAL "dependencies")
    install_build_tree(${WORK}/prefix)
    # hiredis hidden: no hiredis CMake package, and a pkg-config that knows no hiredis.pc.
    # (Not CMAKE_DISABLE_FIND_PACKAGE_PkgConfig: CMake 3.25's FindOpenSSL then fails on its
    # own, calling pkg_check_modules without the PkgConfig module.)
    file(MAKE_DIRECTORY ${WORK}/empty)
    set(ENV{PKG_CONFIG_LIBDIR} ${WORK}/empty)
    set(ENV{PKG_CONFIG_PATH} "")
    configure_consumer(${WORK}/no-hiredis quiet -DCMAKE_PREFIX_PATH=${WORK}/prefix
                       -DCMAKE_DISABLE_FIND_PACKAGE_hiredis=ON)
    expect("without hiredis" "${output}" "redlock not found: [^\n]*hiredis")
    # hiredis as a CMake package, as hiredis 1.x installs it (hiredis.pc still hidden): found
    # through it, linked, run.
    set(fake ${WORK}/hiredis-package/lib/cmake/hiredis)
    file(WRITE ${fake}/hiredis-config.cmake
         "add_library(hiredis::hiredis SHARED IMPORTED)\n"
         "set_target_properties(hiredis::hiredis PROPERTIES IMPORTED_LOCATION \"${HIREDIS_LIBRARY}\"\n"
         "    INTERFACE_INCLUDE_DIRECTORIES \"${HIREDIS_INCLUDE_DIR}\")\n")
    set(build ${WORK}/hiredis-package-build)
    configure_consumer(${build} quiet -DCMAKE_PREFIX_PATH=${WORK}/prefix -Dhiredis_DIR=${fake})
    expect("hiredis package" "${output}" "redlock found, hiredis as hiredis::hiredis")
    step("build (${build})" ${CMAKE_COMMAND} --build ${build} -j2)
    step("run (${build})" ${build}/consumer)

elseif(MODE STREQUAL "subdirectory")
    # Optimised, as consumers ship: redlock's sources compiled inside someone else's build
    # must not warn there (GCC 12 at -O3 found -Wrestrict false positives that -O0 hides).
    set(consumer_build_type Release)
    configure_consumer(${WORK}/build subdirectory -DREDLOCK_SOURCE_DIR=${SOURCE_DIR})
    step("build (${WORK}/build)" ${CMAKE_COMMAND} --build ${WORK}/build -j2)
    if(output MATCHES "warning:")
        message(FATAL_ERROR "consumer.subdirectory: redlock warns in a consumer's build:\n${output}")
    endif()
    step("run (${WORK}/build)" ${WORK}/build/consumer)
    # The parent's install holds the parent's program and nothing of redlock's.
    step("install" ${CMAKE_COMMAND} --install ${WORK}/build --prefix ${WORK}/prefix)
    file(GLOB_RECURSE installed RELATIVE ${WORK}/prefix ${WORK}/prefix/*)
    if(NOT installed STREQUAL "bin/consumer")
        message(FATAL_ERROR "consumer.subdirectory: the parent installed ${installed}")
    endif()

elseif(MODE STREQUAL "deb")
    step("cpack" ${CPACK} -G DEB --config ${BUILD_DIR}/CPackConfig.cmake -B ${WORK}/deb)
    file(GLOB debs ${WORK}/deb/*.deb)
    file(GLOB runtime_deb ${WORK}/deb/redlock_*.deb)
    file(GLOB dev_deb ${WORK}/deb/redlock-dev_*.deb)
    list(LENGTH debs count)
    if(NOT count EQUAL 2 OR NOT runtime_deb OR NOT dev_deb)
        message(FATAL_ERROR "consumer.deb: expected redlock and redlock-dev, found: ${debs}")
    endif()
    # The CLI's package depends on what it runs on, never on what compiles against it.
    step("dpkg-deb -f redlock" dpkg-deb -f ${runtime_deb} Package Version Depends)
    string(REGEX MATCH "Version: ([^\n]+)" version "${output}")
    set(version ${CMAKE_MATCH_1})
    foreach(package IN ITEMS libc6 libhiredis0.14 libssl3 libboost-program-options1.81.0
                         libboost-json1.81.0)
        expect("redlock Depends" "${output}" "${package}")
    endforeach()
    if(output MATCHES "-dev")
        message(FATAL_ERROR "consumer.deb: the CLI's package depends on a -dev package:\n${output}")
    endif()
    # What a static redlock's consumers compile and link with.
    step("dpkg-deb -f redlock-dev" dpkg-deb -f ${dev_deb} Package Version Depends)
    foreach(package IN ITEMS libboost1.81-dev libhiredis-dev libssl-dev)
        expect("redlock-dev Depends" "${output}" "${package}")
    endforeach()
    expect("redlock-dev Version" "${output}" "Version: ${version}")
    # Each package's contents: nothing of the other's.
    step("dpkg-deb -c redlock" dpkg-deb -c ${runtime_deb})
    expect("redlock contents" "${output}" "\\./usr/bin/redlock\n")
    expect("redlock contents" "${output}" "\\./usr/share/man/man1/redlock\\.1\\.gz\n")
    expect("redlock contents" "${output}" "\\./usr/share/doc/redlock/copyright\n")
    if(output MATCHES "/include/|\\.a\n|\\.pc\n|cmake")
        message(FATAL_ERROR "consumer.deb: development files in the CLI's package:\n${output}")
    endif()
    step("dpkg-deb -c redlock-dev" dpkg-deb -c ${dev_deb})
    expect("redlock-dev contents" "${output}" "\\./usr/share/doc/redlock-dev/copyright\n")
    if(output MATCHES "/bin/|/man/")
        message(FATAL_ERROR "consumer.deb: the CLI in the development package:\n${output}")
    endif()
    foreach(deb IN LISTS debs)
        step("dpkg -x" dpkg -x ${deb} ${WORK}/root)
    endforeach()
    set(usr ${WORK}/root/usr)
    find_one(pc ${usr} redlock.pc)
    find_one(config ${usr} redlock-config.cmake)
    find_one(license ${usr}/share LICENSE)
    foreach(file IN ITEMS bin/redlock include/redlock/redlock.hpp)
        if(NOT EXISTS ${usr}/${file})
            message(FATAL_ERROR "consumer.deb: /usr/${file} not in the packages")
        endif()
    endforeach()
    file(READ ${usr}/share/doc/redlock/copyright copyright)
    expect("copyright" "${copyright}" "^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: redlock\n\nFiles: \\*\nCopyright: [^\n]+\nLicense: MIT\n Permission is hereby granted")
    # `man redlock`, where the package put it: made from the program's own --help.
    set(ENV{MANWIDTH} 100)
    step("man redlock" man --manpath=${usr}/share/man redlock)
    expect("man redlock" "${output}" "--conflict-exit-code")
    expect("man redlock" "${output}" "redlock ${version}")
    step("redlock --version" ${usr}/bin/redlock --version)
    expect("redlock --version" "${output}" "^redlock ${version}\n$")
    consumer(${WORK}/cmake package -DCMAKE_PREFIX_PATH=${usr})
    # pkg-config, as a Makefile would use it: the .pc finds its prefix from its own location.
    get_filename_component(pc_dir ${pc} DIRECTORY)
    set(ENV{PKG_CONFIG_PATH} ${pc_dir})
    # A plain query links: a static redlock's dependencies are where it looks.
    step("pkg-config" pkg-config --cflags --libs redlock)
    string(STRIP "${output}" flags)
    string(REGEX REPLACE "([][+.*()^$?|\\])" "\\\\\\1" usr_pattern "${usr}")
    expect("pkg-config" "${flags}" "-I${usr_pattern}/[^ ]*include .*-lredlock .*-lhiredis .*-lssl")
    separate_arguments(flags UNIX_COMMAND "${flags}")
    step("pkg-config build" ${CXX} -std=c++20 -o ${WORK}/consumer-pc
         ${SOURCE_DIR}/tests/consumer/main.cpp ${flags})
    step("pkg-config run" ${WORK}/consumer-pc)

elseif(MODE STREQUAL "shared")
    set(lib ${WORK}/redlock)
    step("configure redlock" ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${lib}
         "-DCMAKE_BUILD_TYPE=${BUILD_TYPE_OF_REBUILD}" -DCMAKE_CXX_COMPILER=${CXX}
         -DBUILD_SHARED_LIBS=ON
         -DREDLOCK_BUILD_TESTS=OFF -DREDLOCK_BUILD_CLI=OFF -DREDLOCK_BUILD_EXAMPLES=OFF
         -DREDLOCK_BUILD_BENCHMARKS=OFF -DREDLOCK_BUILD_DOCS=OFF)
    step("build redlock" ${CMAKE_COMMAND} --build ${lib} --target redlock -j2)
    step("readelf" readelf -d ${lib}/libredlock.so)
    expect("SONAME" "${output}" "Library soname: \\[libredlock\\.so\\.0\\]")

    # Exported: the public API, none of the internals. Judged on mangled names, where the
    # namespace of the symbol itself comes first (_ZN7redlock6detail... is redlock::detail,
    # also as the vtable _ZTV, typeinfo _ZTI, guard _ZGV... of one), unlike a parameter type.
    set(internal "^_Z(T[VIS]|GV|T[hv][n0-9_]*)?NK?7redlock(6detail|3cli|12_GLOBAL__N_1)")
    step("nm -D" nm -D --defined-only --format=posix ${lib}/libredlock.so)
    string(REGEX MATCHALL "[^\n]+" lines "${output}")
    set(exported)
    set(leaked)
    foreach(line IN LISTS lines)
        string(REGEX REPLACE " .*" "" symbol "${line}")
        list(APPEND exported ${symbol})
        if(symbol MATCHES "${internal}")
            list(APPEND leaked ${symbol})
        endif()
    endforeach()
    if(leaked)
        step("c++filt" c++filt ${leaked})
        message(FATAL_ERROR "consumer.shared: internals exported:\n${output}")
    endif()
    # Every function the static library defines out of line in namespace redlock (outside its
    # internal namespaces) is public API, so the shared library must export it: a public
    # class or function without REDLOCK_API would be missing here.
    if(EXISTS ${BUILD_DIR}/libredlock.a)
        step("nm static" nm --defined-only --format=posix ${BUILD_DIR}/libredlock.a)
        string(REGEX MATCHALL "\n_ZNK?7redlock[^ ]* T " defined "${output}")
        set(missing)
        foreach(symbol IN LISTS defined)
            string(REGEX REPLACE "^\n([^ ]+) T $" "\\1" symbol "${symbol}")
            if(NOT symbol MATCHES "${internal}" AND NOT symbol IN_LIST exported)
                list(APPEND missing ${symbol})
            endif()
        endforeach()
        if(missing)
            step("c++filt" c++filt ${missing})
            message(FATAL_ERROR "consumer.shared: not exported (REDLOCK_API missing?):\n${output}")
        endif()
    endif()

    # A shared redlock keeps hiredis and OpenSSL to itself: its package needs neither.
    step("install redlock" ${CMAKE_COMMAND} --install ${lib} --prefix ${WORK}/prefix)
    consumer(${WORK}/build package -DCMAKE_PREFIX_PATH=${WORK}/prefix
             -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON -DCMAKE_DISABLE_FIND_PACKAGE_hiredis=ON
             -DCMAKE_DISABLE_FIND_PACKAGE_OpenSSL=ON)
    step("readelf consumer" readelf -d ${WORK}/build/consumer)
    expect("consumer NEEDED" "${output}" "Shared library: \\[libredlock\\.so\\.0\\]")
else()
    message(FATAL_ERROR "run.cmake: unknown MODE '${MODE}'")
endif()
