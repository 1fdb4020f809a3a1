# The fuzz targets, shared by fuzz/CMakeLists.txt (libFuzzer, clang) and
# tests/fuzz/CMakeLists.txt (the regression drivers, any compiler): each
# target is fuzz/<name>_fuzz.cc plus the sources and libraries below.
set(LIMBIC_FUZZ_TARGETS events config rules archive http mcp tokenizer safetensors)

set(LIMBIC_FUZZ_events_LIBS limbic_state)
set(LIMBIC_FUZZ_config_LIBS limbic_runtime)
set(LIMBIC_FUZZ_rules_LIBS limbic_reflexes)
set(LIMBIC_FUZZ_archive_LIBS limbic_archive)
set(LIMBIC_FUZZ_http_SOURCES in_process_api.cc)
set(LIMBIC_FUZZ_http_LIBS limbic_api)
set(LIMBIC_FUZZ_mcp_SOURCES in_process_api.cc)
set(LIMBIC_FUZZ_mcp_LIBS limbic_mcp)
set(LIMBIC_FUZZ_tokenizer_LIBS limbic_encoder)
set(LIMBIC_FUZZ_safetensors_LIBS limbic_encoder)

# limbic_fuzz_sources(<name> <out-var>): the target's sources, as full paths.
function(limbic_fuzz_sources name out)
  set(srcs ${PROJECT_SOURCE_DIR}/fuzz/${name}_fuzz.cc)
  foreach(src IN LISTS LIMBIC_FUZZ_${name}_SOURCES)
    list(APPEND srcs ${PROJECT_SOURCE_DIR}/fuzz/${src})
  endforeach()
  set(${out} ${srcs} PARENT_SCOPE)
endfunction()
