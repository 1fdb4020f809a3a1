#include "bench/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace limbic::bench {

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  size_t i = std::min(v.size() - 1, rank == 0 ? 0 : rank - 1);
  std::nth_element(v.begin(), v.begin() + static_cast<long>(i), v.end());
  return v[i];
}

nlohmann::json ToJson(const std::vector<Row>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const Row& r : rows)
    out.push_back({{"scenario", r.scenario}, {"size", r.size},     {"system", r.system},
                   {"unit", r.unit},         {"reps", r.reps},     {"median", r.median},
                   {"p50_us", r.p50_us},     {"p99_us", r.p99_us}, {"ops", r.ops},
                   {"note", r.note}});
  for (size_t i = 0; i < rows.size(); ++i)
    if (!rows[i].by_op.is_null()) out[i]["by_op"] = rows[i].by_op;
  return out;
}

namespace {

std::string Number(double v) {
  char buf[32];
  if (v >= 100) std::snprintf(buf, sizeof buf, "%.0f", v);
  else if (v >= 10) std::snprintf(buf, sizeof buf, "%.1f", v);
  else std::snprintf(buf, sizeof buf, "%.2f", v);
  // Thousands separators for readability: 123456 -> 123,456.
  std::string_view s = buf;
  size_t end = std::min(s.find('.'), s.size());
  std::string out;
  for (size_t i = 0; i < end; ++i) {
    if (i > 0 && (end - i) % 3 == 0) out.push_back(',');
    out.push_back(s[i]);
  }
  out.append(s.substr(end));
  return out;
}

std::string Latency(double us) {
  if (us <= 0) return "";
  char buf[32];
  if (us >= 1000) std::snprintf(buf, sizeof buf, "%.1f ms", us / 1000);
  else std::snprintf(buf, sizeof buf, "%.0f µs", us);
  return buf;
}

}  // namespace

std::string MarkdownTables(const std::vector<Row>& rows, const std::vector<Comparison>& comparisons) {
  std::vector<std::string> scenarios;
  for (const Row& r : rows)
    if (std::find(scenarios.begin(), scenarios.end(), r.scenario) == scenarios.end())
      scenarios.push_back(r.scenario);
  std::string md;
  for (const std::string& scenario : scenarios) {
    std::vector<std::string> systems;
    std::set<size_t> sizes;
    std::map<std::pair<size_t, std::string>, const Row*> cell;
    std::string unit;
    for (const Row& r : rows) {
      if (r.scenario != scenario) continue;
      if (std::find(systems.begin(), systems.end(), r.system) == systems.end())
        systems.push_back(r.system);
      sizes.insert(r.size);
      cell[{r.size, r.system}] = &r;
      unit = r.unit;
    }
    const bool lower_is_better = unit == "ms";
    md += "### " + scenario + " (" + unit + (lower_is_better ? ", lower is better" : "") +
          "; p99 of single operations)\n\n| size |";
    for (const auto& s : systems) md += " " + s + " |";
    for (const auto& c : comparisons)
      if (std::find(systems.begin(), systems.end(), c.ours) != systems.end())
        md += " " + c.label + " ratio |";
    md += "\n|---|";
    for (size_t i = 0; i < systems.size(); ++i) md += "---|";
    for (const auto& c : comparisons)
      if (std::find(systems.begin(), systems.end(), c.ours) != systems.end()) md += "---|";
    md += "\n";
    for (size_t size : sizes) {
      // Size 0: a scenario that starts from an empty state (http).
      md += "| " + (size ? Number(static_cast<double>(size)) : std::string("empty state")) + " |";
      for (const auto& s : systems) {
        auto it = cell.find({size, s});
        if (it == cell.end()) {
          md += " |";
          continue;
        }
        const Row& r = *it->second;
        md += " " + Number(r.median);
        if (r.p99_us > 0) md += " (p99 " + Latency(r.p99_us) + ")";
        md += " |";
      }
      for (const auto& c : comparisons) {
        if (std::find(systems.begin(), systems.end(), c.ours) == systems.end()) continue;
        auto ours = cell.find({size, c.ours});
        double best = 0;
        std::string best_name;
        for (const auto& other : c.against) {
          auto it = cell.find({size, other});
          if (it == cell.end()) continue;
          double v = it->second->median;
          bool better = best_name.empty() || (lower_is_better ? v < best : v > best);
          if (better) {
            best = v;
            best_name = other;
          }
        }
        if (ours == cell.end() || best_name.empty() || best <= 0 || ours->second->median <= 0) {
          md += " |";
          continue;
        }
        double ratio = lower_is_better ? best / ours->second->median : ours->second->median / best;
        char buf[64];
        std::snprintf(buf, sizeof buf, " %.1f× vs %s |", ratio, best_name.c_str());
        md += buf;
      }
      md += "\n";
    }
    md += "\n";
  }
  return md;
}

}  // namespace limbic::bench
