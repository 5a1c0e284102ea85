# `cpack -G DEB` in the build tree: one package with the library, its headers, the CMake and
# pkg-config files, the CLI (when built) and the licence, installed under /usr.
set(CPACK_PACKAGE_NAME redlock)
set(CPACK_PACKAGE_VENDOR "the redlock authors")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Redlock distributed locks on independent Redis masters (C++20 library and CLI)")
set(CPACK_PACKAGE_DESCRIPTION
    "A C++20 Redlock library on Boost.Asio (headers, library, CMake package, pkg-config file) and the redlock command-line tool, which runs a command under a distributed lock.")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(REDLOCK_PACKAGE_CONTACT "the redlock authors" CACHE STRING "Maintainer field of the .deb")
set(CPACK_PACKAGE_CONTACT "${REDLOCK_PACKAGE_CONTACT}")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "cmake, pkg-config")

# What a consumer compiles and links against: Boost.Asio's headers always; hiredis and
# OpenSSL too when the library is static (they end up in the consumer's link).
get_target_property(redlock_type redlock TYPE)
if(redlock_type STREQUAL "STATIC_LIBRARY")
    set(CPACK_DEBIAN_PACKAGE_DEPENDS "libboost1.81-dev, libhiredis-dev, libssl-dev")
else()
    set(CPACK_DEBIAN_PACKAGE_DEPENDS "libboost1.81-dev")
endif()
# What the CLI (and a shared library) run on: computed by dpkg-shlibdeps where it exists.
find_program(REDLOCK_DPKG_SHLIBDEPS dpkg-shlibdeps)
mark_as_advanced(REDLOCK_DPKG_SHLIBDEPS)
if(REDLOCK_DPKG_SHLIBDEPS)
    set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
    string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libc6, libgcc-s1, libstdc++6, libhiredis0.14, "
           "libssl3, libboost-program-options1.81.0")
endif()

set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build[^/]*/" "/compose/\\\\.local/"
    "/node_modules/")
include(CPack)
