# cmake --install: the static and shared libraries, the header, the
# kubeletplugin-policy and kubeletplugin-probe tools and a pkg-config file, kubeletplugin.pc,
# written at install time for the prefix installed to (so --prefix works).
# The shared library brings its dependencies; a static link needs them
# too: they are the .pc file's Requires.private and Libs.private
# (pkg-config --static --libs). gRPC's come as libraries, not as a module
# (kubeletplugin.pc.in says why).
include(GNUInstallDirs)

install(TARGETS kubeletplugin kubeletplugin_static
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${CMAKE_SOURCE_DIR}/include/kubeletplugin.h
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set_target_properties(kubeletplugin-policy PROPERTIES
    INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
install(TARGETS kubeletplugin-policy kubeletplugin-probe
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Everything but the prefix is filled in now; "@KP_PC_PREFIX@" survives
# to the install step, which substitutes the prefix.
foreach(d LIBDIR INCLUDEDIR)
	if(IS_ABSOLUTE "${CMAKE_INSTALL_${d}}")
		set(KP_PC_${d} "${CMAKE_INSTALL_${d}}")
	else()
		set(KP_PC_${d} "\${prefix}/${CMAKE_INSTALL_${d}}")
	endif()
endforeach()
set(KP_PC_PREFIX "@KP_PC_PREFIX@")
# pkg-config's own output, not CMake's GRPC_STATIC_LDFLAGS, which adds
# the system library directories as -L flags.
execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --static --libs grpc
    OUTPUT_VARIABLE KP_PC_GRPC_LIBS OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE kp_pc_rc)
if(NOT kp_pc_rc EQUAL 0 OR KP_PC_GRPC_LIBS STREQUAL "")
	message(FATAL_ERROR "pkg-config --static --libs grpc: ${kp_pc_rc}")
endif()
configure_file(${CMAKE_SOURCE_DIR}/cmake/kubeletplugin.pc.in
    ${CMAKE_BINARY_DIR}/kubeletplugin.pc.in @ONLY)
install(CODE "
	set(KP_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
	configure_file(\"${CMAKE_BINARY_DIR}/kubeletplugin.pc.in\"
	    \"${CMAKE_BINARY_DIR}/kubeletplugin.pc\" @ONLY)
")
install(FILES ${CMAKE_BINARY_DIR}/kubeletplugin.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
