// `limbic memory ...`'s answers as text (without --json): recall, stats,
// plans and the context bundle.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace limbic::runtime {

//! Prints `out`, the answer of the memory command `what`, as text.
void PrintMemoryText(const nlohmann::json& out, const std::string& what);
//! The context bundle as text: what is happening now, then each page,
//! section and memory under its source.
void PrintContext(const nlohmann::json& out);

}  // namespace limbic::runtime
