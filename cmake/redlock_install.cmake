include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS redlock redlock_hiredis EXPORT redlock-targets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/redlock DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(REDLOCK_BUILD_CLI)
    install(TARGETS redlock_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(EXPORT redlock-targets
    NAMESPACE redlock::
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/redlock)
configure_package_config_file(cmake/redlock-config.cmake.in
    ${CMAKE_CURRENT_BINARY_DIR}/redlock-config.cmake
    INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/redlock)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/redlock-config-version.cmake
    COMPATIBILITY SameMinorVersion)
install(FILES
    ${CMAKE_CURRENT_BINARY_DIR}/redlock-config.cmake
    ${CMAKE_CURRENT_BINARY_DIR}/redlock-config-version.cmake
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/redlock)
