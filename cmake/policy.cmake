# Sandbox policy (policy/): sanitizer builds compile in the extra
# syscalls ASan/UBSan make at run time (policy/syscalls.c), so the e2e
# proofs also run with the filter on; and the OCI profile CLI.
if(KP_SANITIZE)
	target_compile_definitions(kpobj PRIVATE KP_SANITIZE_SYSCALLS)
endif()

add_executable(kubeletplugin-policy
    ${CMAKE_SOURCE_DIR}/tools/kubeletplugin-policy.c)
target_compile_options(kubeletplugin-policy PRIVATE ${KP_WARN})
target_link_libraries(kubeletplugin-policy PRIVATE kubeletplugin
    PkgConfig::JANSSON)
set_target_properties(kubeletplugin-policy PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tools)

# The exec probe (tools/kubeletplugin-probe.c): a gRPC C-core client of
# the registration socket, for clusters that forbid host ports; the
# library (statically) for the rolling-update socket names.
add_executable(kubeletplugin-probe
    ${CMAKE_SOURCE_DIR}/tools/kubeletplugin-probe.c)
target_compile_options(kubeletplugin-probe PRIVATE ${KP_WARN})
target_compile_definitions(kubeletplugin-probe PRIVATE _GNU_SOURCE)
target_link_libraries(kubeletplugin-probe PRIVATE kubeletplugin_static)
set_target_properties(kubeletplugin-probe PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tools)
