# Install rules (REDLOCK_INSTALL): the library, its headers, a CMake package
# (find_package(redlock)), and the CLI when built.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS redlock EXPORT redlock-targets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/redlock DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(REDLOCK_BUILD_CLI)
    install(TARGETS redlock_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# A static redlock brings its private dependencies (hiredis, OpenSSL) to every link; a shared
# one hides them. redlock-config.cmake asks for them only in the first case.
get_target_property(redlock_type redlock TYPE)
if(redlock_type STREQUAL "STATIC_LIBRARY")
    set(REDLOCK_STATIC TRUE)
else()
    set(REDLOCK_STATIC FALSE)
endif()

install(EXPORT redlock-targets
    NAMESPACE redlock::
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/redlock)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/redlock-config.cmake.in
    ${PROJECT_BINARY_DIR}/redlock-config.cmake
    INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/redlock)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/redlock-config-version.cmake
    COMPATIBILITY SameMinorVersion)
install(FILES
    ${PROJECT_BINARY_DIR}/redlock-config.cmake
    ${PROJECT_BINARY_DIR}/redlock-config-version.cmake
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/redlock)
