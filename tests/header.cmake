# test_header_strict: kubeletplugin.h must compile standalone as strict
# ISO C11 (no GNU extensions, no _GNU_SOURCE, -pedantic, warnings are
# errors) and its KP_EXTERN functions must be exported by the shared
# library. Include from tests/CMakeLists.txt. The unit-test glob also
# builds tests/unit/test_header.c as "test_header" with the usual flags;
# this target is separate so the two never clash whatever the order.
add_executable(test_header_strict ${CMAKE_SOURCE_DIR}/tests/unit/test_header.c)
set_target_properties(test_header_strict PROPERTIES
    C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(test_header_strict PRIVATE
    -Wall -Wextra -Werror -pedantic)
target_link_libraries(test_header_strict PRIVATE kubeletplugin)
add_test(NAME test_header_strict COMMAND test_header_strict)
set_tests_properties(test_header_strict PROPERTIES TIMEOUT 60)
