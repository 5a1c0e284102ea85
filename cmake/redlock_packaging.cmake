# `cpack -G DEB` in the build tree: two packages, installed under /usr, following the install
# components (cmake/redlock_install.cmake):
#   redlock      the CLI and its man page (and a shared library): only what they run on
#   redlock-dev  the headers, the library to link, the CMake and pkg-config files
# Installing the CLI then brings no compiler headers (libboost-dev, libhiredis-dev...).
set(CPACK_PACKAGE_NAME redlock)
set(CPACK_PACKAGE_VENDOR "the redlock authors")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Redlock distributed locks on independent Redis masters (C++20 library and CLI)")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(REDLOCK_PACKAGE_CONTACT "the redlock authors" CACHE STRING "Maintainer field of the .debs")
set(CPACK_PACKAGE_CONTACT "${REDLOCK_PACKAGE_CONTACT}")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime development)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME redlock)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION utils)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "Redlock distributed locks on independent Redis masters: command-line tool
 redlock runs a command under a distributed lock held on a majority of independent Redis
 masters (in the spirit of flock(1)), or takes, renews, releases and shows one from a shell
 script. See redlock(1).")
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME redlock-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SUGGESTS "redlock, cmake, pkg-config")
set(CPACK_COMPONENT_DEVELOPMENT_DESCRIPTION
    "Redlock distributed locks on independent Redis masters: C++20 library
 A C++20 Redlock library on Boost.Asio: headers, the library, a CMake package
 (find_package(redlock)) and a pkg-config file.")

# What a consumer compiles and links against: Boost.Asio's headers always; hiredis and
# OpenSSL too when the library is static (they end up in the consumer's link); a shared
# library is the runtime package's.
get_target_property(redlock_type redlock TYPE)
if(redlock_type STREQUAL "STATIC_LIBRARY")
    set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS "libboost1.81-dev, libhiredis-dev, libssl-dev")
else()
    set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS
        "libboost1.81-dev, redlock (= ${CPACK_PACKAGE_VERSION})")
endif()
# What the CLI (and a shared library) run on: computed by dpkg-shlibdeps where it exists.
find_program(REDLOCK_DPKG_SHLIBDEPS dpkg-shlibdeps)
mark_as_advanced(REDLOCK_DPKG_SHLIBDEPS)
if(REDLOCK_DPKG_SHLIBDEPS)
    set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
else()
    set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS
        "libc6, libgcc-s1, libstdc++6, libhiredis0.14, libssl3, libboost-program-options1.81.0, libboost-json1.81.0")
endif()

# Every package carries /usr/share/doc/PACKAGE/copyright (Debian policy 12.5), in the
# machine-readable format, with the licence's text.
file(READ ${PROJECT_SOURCE_DIR}/LICENSE licence)
string(REGEX REPLACE "^MIT License\n\n" "" licence "${licence}")
string(REGEX MATCH "Copyright \\(c\\) ([^\n]+)" holder_line "${licence}")
set(holder ${CMAKE_MATCH_1})
string(REGEX REPLACE "^Copyright \\(c\\) [^\n]+\n\n" "" licence "${licence}")
string(STRIP "${licence}" licence)
string(REGEX REPLACE "\n\n" "\n.\n" licence "${licence}")
string(REGEX REPLACE "\n" "\n " licence "${licence}")
foreach(package IN ITEMS redlock redlock-dev)
    set(copyright ${PROJECT_BINARY_DIR}/packaging/${package}/copyright)
    file(WRITE ${copyright}
         "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
         "Upstream-Name: redlock\n\n"
         "Files: *\nCopyright: ${holder}\nLicense: MIT\n ${licence}\n")
endforeach()
install(FILES ${PROJECT_BINARY_DIR}/packaging/redlock/copyright
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/redlock COMPONENT runtime)
install(FILES ${PROJECT_BINARY_DIR}/packaging/redlock-dev/copyright
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/redlock-dev COMPONENT development)

set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build[^/]*/" "/compose/\\\\.local/"
    "/node_modules/")
include(CPack)
