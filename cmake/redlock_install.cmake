# Install rules (REDLOCK_INSTALL): the library, its headers, a CMake package
# (find_package(redlock)), a pkg-config file, the CLI and its man page when built, and the
# licence. Two components, which the .deb packages follow (cmake/redlock_packaging.cmake):
# `runtime`, what runs (the CLI, its man page, a shared library), and `development`, what a
# consumer compiles and links with.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS redlock EXPORT redlock-targets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime
            NAMELINK_COMPONENT development
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/redlock DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    COMPONENT development)
if(REDLOCK_BUILD_CLI)
    install(TARGETS redlock_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
    # redlock(1), made from the program's own help by help2man (cmake/redlock_man_page.cmake;
    # scripts/setup.sh installs help2man).
    find_program(REDLOCK_HELP2MAN help2man)
    mark_as_advanced(REDLOCK_HELP2MAN)
    if(REDLOCK_HELP2MAN)
        set(man_page ${PROJECT_BINARY_DIR}/man/redlock.1.gz)
        add_custom_command(OUTPUT ${man_page}
            COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
            COMMAND ${CMAKE_COMMAND} -DCLI=$<TARGET_FILE:redlock_cli>
                    -DHELP2MAN=${REDLOCK_HELP2MAN} -DOUTPUT=${man_page}
                    -P ${PROJECT_SOURCE_DIR}/cmake/redlock_man_page.cmake
            DEPENDS redlock_cli ${PROJECT_SOURCE_DIR}/cmake/redlock_man_page.cmake
            COMMENT "Making the redlock(1) man page"
            VERBATIM)
        add_custom_target(redlock_man_page ALL DEPENDS ${man_page})
        install(FILES ${man_page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)
    else()
        message(WARNING "help2man not found: redlock(1) is not made or installed "
                        "(apt-get install help2man)")
    endif()
endif()
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR}
    COMPONENT runtime)

# A static redlock brings its private dependencies (hiredis, OpenSSL) to every link; a shared
# one hides them. redlock-config.cmake and redlock.pc ask for them only in the first case.
get_target_property(redlock_type redlock TYPE)
# A static library's dependencies go where a plain `pkg-config --libs redlock` finds them
# (Requires and Libs, not their .private forms, which only --static reads): a consumer links
# the archive and everything it needs with the same query either way.
if(redlock_type STREQUAL "STATIC_LIBRARY")
    set(REDLOCK_STATIC TRUE)
    set(REDLOCK_PC_REQUIRES "hiredis libssl libcrypto")
    set(REDLOCK_PC_LIBS "-pthread")
else()
    set(REDLOCK_STATIC FALSE)
    set(REDLOCK_PC_REQUIRES "")
    set(REDLOCK_PC_LIBS "")
endif()

install(EXPORT redlock-targets
    NAMESPACE redlock::
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/redlock
    COMPONENT development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/redlock-config.cmake.in
    ${PROJECT_BINARY_DIR}/redlock-config.cmake
    INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/redlock)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/redlock-config-version.cmake
    COMPATIBILITY SameMinorVersion)
install(FILES
    ${PROJECT_BINARY_DIR}/redlock-config.cmake
    ${PROJECT_BINARY_DIR}/redlock-config-version.cmake
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/redlock
    COMPONENT development)

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
install(FILES ${PROJECT_BINARY_DIR}/redlock.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
    COMPONENT development)
