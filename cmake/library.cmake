# libkubeletplugin: every .c file of the role and module directories.
# Globbing (with CONFIGURE_DEPENDS) keeps one list: adding a file to a module
# directory adds it to the library.
set(KP_MODULES api base monitor supervisor ipc rpc registrar nodeserver publisher
    observer policy)
set(KP_LIB_SRCS)
foreach(m ${KP_MODULES})
	file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${m}/*.c)
	list(APPEND KP_LIB_SRCS ${srcs})
endforeach()

add_library(kpobj OBJECT ${KP_LIB_SRCS})
target_include_directories(kpobj PUBLIC
    ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR} ${KP_PROTO_OUT})
target_compile_options(kpobj PRIVATE ${KP_WARN})
target_compile_definitions(kpobj PRIVATE _GNU_SOURCE)
target_link_libraries(kpobj PUBLIC kpproto PkgConfig::GRPC
    PkgConfig::PROTOBUFC PkgConfig::JANSSON
    PkgConfig::SECCOMP PkgConfig::CAPNG PkgConfig::YAML
    PkgConfig::CRYPTO PkgConfig::ZLIB Threads::Threads ${CMAKE_DL_LIBS})
# libcurl and libmicrohttpd: headers only. The publisher and the observer
# dlopen them by soname (publisher/curl_dl.h, observer/mhd_dl.h), so that
# no other process maps them and what they pull in (GnuTLS and more).
target_include_directories(kpobj PRIVATE ${CURL_INCLUDE_DIRS}
    ${MHD_INCLUDE_DIRS})
target_compile_options(kpobj PRIVATE ${CURL_CFLAGS_OTHER} ${MHD_CFLAGS_OTHER})
set_target_properties(kpobj PROPERTIES POSITION_INDEPENDENT_CODE ON
    C_VISIBILITY_PRESET hidden)

# The static archive is what tests and examples link (internal symbols
# reachable); the shared library exports only KP_EXTERN symbols.
add_library(kubeletplugin_static STATIC $<TARGET_OBJECTS:kpobj>
    $<TARGET_OBJECTS:kpproto>)
target_link_libraries(kubeletplugin_static PUBLIC kpobj)
set_target_properties(kubeletplugin_static PROPERTIES
    OUTPUT_NAME kubeletplugin)
add_library(kubeletplugin SHARED $<TARGET_OBJECTS:kpobj>
    $<TARGET_OBJECTS:kpproto>)
target_link_libraries(kubeletplugin PRIVATE PkgConfig::GRPC
    PkgConfig::PROTOBUFC PkgConfig::JANSSON
    PkgConfig::SECCOMP PkgConfig::CAPNG PkgConfig::YAML
    PkgConfig::CRYPTO PkgConfig::ZLIB Threads::Threads ${CMAKE_DL_LIBS})
set_target_properties(kubeletplugin PROPERTIES VERSION ${PROJECT_VERSION}
    SOVERSION 0)
target_include_directories(kubeletplugin PUBLIC ${CMAKE_SOURCE_DIR}/include)
