// Base64 (RFC 4648, the standard alphabet, with '=' padding): vectors as
// stored in records (memory/embedder.h) and file contents sent to the API
// (POST /v1/memory/ingest). Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace limbic {

//! `bytes` as base64, padded to a multiple of 4 characters.
std::string Base64Encode(std::string_view bytes);

//! The bytes of padded base64 `text`; InvalidArgument "base64 length is not
//! a multiple of 4" or "not base64 at byte N" (no whitespace is skipped).
Result<std::string> Base64Decode(std::string_view text);

//! The length Base64Encode gives `n` bytes.
constexpr size_t Base64Size(size_t n) { return (n + 2) / 3 * 4; }

}  // namespace limbic
