# Dependencies, all from Debian 12 packages: libboost1.81-dev, libhiredis-dev, libssl-dev.
find_package(Threads REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(Boost 1.81 REQUIRED CONFIG)

# hiredis 1.x ships a CMake config; Debian's 0.14.1 only a pkg-config file.
find_package(hiredis CONFIG QUIET)
add_library(redlock_hiredis INTERFACE)
if(TARGET hiredis::hiredis)
    target_link_libraries(redlock_hiredis INTERFACE hiredis::hiredis)
else()
    find_package(PkgConfig REQUIRED)
    pkg_check_modules(HIREDIS REQUIRED IMPORTED_TARGET hiredis)
    target_link_libraries(redlock_hiredis INTERFACE PkgConfig::HIREDIS)
endif()
