# cmake --install: the static and shared libraries, the header, the
# kubeletplugin-policy and kubeletplugin-probe tools and a pkg-config file, kubeletplugin.pc,
# written at install time for the prefix installed to (so --prefix works).
# The shared library brings its dependencies; a static link needs them
# too: they are the .pc file's Requires.private and Libs.private
# (pkg-config --static --libs).
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
configure_file(${CMAKE_SOURCE_DIR}/cmake/kubeletplugin.pc.in
    ${CMAKE_BINARY_DIR}/kubeletplugin.pc.in @ONLY)
install(CODE "
	set(KP_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
	configure_file(\"${CMAKE_BINARY_DIR}/kubeletplugin.pc.in\"
	    \"${CMAKE_BINARY_DIR}/kubeletplugin.pc\" @ONLY)
")
install(FILES ${CMAKE_BINARY_DIR}/kubeletplugin.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
