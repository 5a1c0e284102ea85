# Install rules (REDLOCK_INSTALL): the library, its headers, a CMake package
# (find_package(redlock)), a pkg-config file, the CLI when built, and the licence.
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
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})

# A static redlock brings its private dependencies (hiredis, OpenSSL) to every link; a shared
# one hides them. redlock-config.cmake and redlock.pc ask for them only in the first case.
get_target_property(redlock_type redlock TYPE)
if(redlock_type STREQUAL "STATIC_LIBRARY")
    set(REDLOCK_STATIC TRUE)
    set(REDLOCK_PC_REQUIRES_PRIVATE "hiredis libssl libcrypto")
    set(REDLOCK_PC_LIBS_PRIVATE "-pthread")
else()
    set(REDLOCK_STATIC FALSE)
    set(REDLOCK_PC_REQUIRES_PRIVATE "")
    set(REDLOCK_PC_LIBS_PRIVATE "")
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

# redlock.pc finds the prefix from its own location (${pcfiledir}), so the same file serves
# `cmake --install --prefix`, a .deb unpacked anywhere, and /usr.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    set(REDLOCK_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
    file(RELATIVE_PATH up "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
    string(REGEX REPLACE "/$" "" up "${up}")
    set(REDLOCK_PC_PREFIX "\${pcfiledir}/${up}")
endif()
foreach(dir IN ITEMS LIBDIR INCLUDEDIR)
    if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
        set(REDLOCK_PC_${dir} "${CMAKE_INSTALL_${dir}}")
    else()
        set(REDLOCK_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
    endif()
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/redlock.pc.in ${PROJECT_BINARY_DIR}/redlock.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/redlock.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
