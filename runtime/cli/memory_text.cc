#include "runtime/cli/memory_text.h"

#include <cstdio>
#include <iostream>
#include <string>

#include "runtime/cli/cli.h"

namespace limbic::runtime {

using nlohmann::json;

void PrintMemoryText(const json& out, const std::string& what) {
  if (what == "recall") {
    if (out.contains("vector") && out["vector"].contains("note"))
      std::cerr << "limbic: note: " << out["vector"]["note"].get<std::string>() << "\n";
    if (out["results"].empty()) std::cout << "nothing recalled\n";
    for (const json& r : out["results"]) {
      std::printf("%-10s %-8s %.5f  %s%s\n", r["id"].get<std::string>().c_str(),
                  r["kind"].get<std::string>().c_str(), r["score"].get<double>(),
                  r.value("text", "").substr(0, 200).c_str(),
                  r.contains("via") ? ("  (via " + r["via"].get<std::string>() + ")").c_str() : "");
      if (!r.contains("explain")) continue;
      if (const json& e = r["explain"]; e.contains("association")) {
        // The path: source -> the association -> the entity this memory names.
        const json& a = e["association"];
        std::printf("    associated: %s (%.5f) -> %s: %s -%s-> %s -> its %s \"%s\"; x %.1f\n",
                    a["from"].get<std::string>().c_str(), a["from_score"].get<double>(),
                    a["id"].get<std::string>().c_str(), a["entity_a"].get<std::string>().c_str(),
                    a["relation"].get<std::string>().c_str(),
                    a["entity_b"].get<std::string>().c_str(), a["as"].get<std::string>().c_str(),
                    a["reached"].get<std::string>().c_str(), a["factor"].get<double>());
      }
      std::cout << "    " << r["explain"].dump() << "\n";
    }
  } else if (what == "related") {
    for (const json& r : out["related"])
      std::cout << std::string(2 * (r["depth"].get<int>() - 1), ' ') << r["from"].get<std::string>()
                << " —" << r["relation"].get<std::string>() << "→ " << r["to"].get<std::string>()
                << "  (" << r["via"].get<std::string>() << ")\n";
  } else if (what == "remember") {
    std::cout << out["id"].get<std::string>();
    if (out.value("reinforced", false)) std::cout << " (already known: reinforced)";
    if (out.contains("superseded") && !out["superseded"].empty())
      std::cout << " (supersedes " << out["superseded"].dump() << ")";
    std::cout << "\n";
    if (out.contains("note"))
      std::cerr << "limbic: note: " << out["note"].get<std::string>() << "\n";
  } else if (what == "ingest") {
    for (const json& f : out["files"])
      std::cout << f["status"].get<std::string>() << "  " << f["path"].get<std::string>() << "  ("
                << f["chunks"] << " chunks)\n";
    for (const json& s : out["skipped"])
      std::cout << "skipped  " << s["path"].get<std::string>() << "  ("
                << s["reason"].get<std::string>() << ")\n";
    for (const json& e : out["errors"])
      std::cerr << "limbic: error: " << e["path"].get<std::string>() << ": "
                << e["error"].get<std::string>() << "\n";
  } else {
    PrintFields(out);
  }
}


void PrintContext(const json& out) {
  std::printf("context for \"%s\": %zu of %zu tokens%s\n", out["query"].get<std::string>().c_str(),
              out["used_tokens"].get<size_t>(), out["budget_tokens"].get<size_t>(),
              out["truncated"].get<bool>() ? ", truncated" : "");
  const json& arousal = out["arousal"];
  if (arousal.is_object())
    std::printf("arousal %.2f\n", arousal.value("effective", arousal.value("level", 0.0)));
  if (const json& t = out["thread"]; t.is_object())
    std::printf("thread %s: %s\n", t.value("id", "").c_str(), t.value("goal", "").c_str());
  for (const json& p : out["thread_percepts"])
    std::printf("  percept %s: %s/%s\n", p.value("id", "").c_str(), p.value("source", "").c_str(),
                p.value("type", "").c_str());
  auto text = [](const json& item) {
    std::printf("\n[%s]%s\n", item["source"].get<std::string>().c_str(),
                item.value("cut", false) ? " (cut)" : "");
    std::cout << item["text"].get<std::string>() << "\n";
  };
  for (const json& e : out["entities"]) text(e);
  for (const json& m : out["memory_md"]) text(m);
  if (!out["memories"].empty()) std::cout << "\n";
  for (const json& m : out["memories"])
    std::printf("[%s] %s %.5f  %s%s\n", m["source"].get<std::string>().c_str(),
                m["kind"].get<std::string>().c_str(), m["score"].get<double>(),
                m["text"].get<std::string>().substr(0, 200).c_str(),
                m.contains("via") ? ("  (via " + m["via"].get<std::string>() + ")").c_str() : "");
}

// `limbic memory context`, as GET /v1/context: the attention view, recall
// without reinforcing, then the world model's texts (runtime/context.h).

}  // namespace limbic::runtime
