# protobuf-c sources are generated at build time, never committed.
set(KP_PROTOS pluginregistration dra_v1alpha4 dra_v1beta1 dra_v1
    dra_health_v1alpha1 dra_health_v1 ipc)
set(KP_PROTO_OUT ${CMAKE_BINARY_DIR}/proto)
file(MAKE_DIRECTORY ${KP_PROTO_OUT})
set(KP_PROTO_SRCS)
foreach(p ${KP_PROTOS})
	add_custom_command(
	    OUTPUT ${KP_PROTO_OUT}/${p}.pb-c.c ${KP_PROTO_OUT}/${p}.pb-c.h
	    COMMAND ${PROTOC_C} --proto_path=${CMAKE_SOURCE_DIR}/proto
		--c_out=${KP_PROTO_OUT} ${CMAKE_SOURCE_DIR}/proto/${p}.proto
	    DEPENDS ${CMAKE_SOURCE_DIR}/proto/${p}.proto
	    COMMENT "protoc-c ${p}.proto")
	list(APPEND KP_PROTO_SRCS ${KP_PROTO_OUT}/${p}.pb-c.c)
endforeach()
add_library(kpproto OBJECT ${KP_PROTO_SRCS})
target_include_directories(kpproto PUBLIC ${KP_PROTO_OUT})
target_link_libraries(kpproto PUBLIC PkgConfig::PROTOBUFC)
set_target_properties(kpproto PROPERTIES POSITION_INDEPENDENT_CODE ON
    C_VISIBILITY_PRESET hidden)
