#include "runtime/metrics.h"

#include <algorithm>
#include <cstdio>

namespace limbic::runtime {
namespace {

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string Sample(const std::string& name, const std::string& labels) {
  return labels.empty() ? name : name + "{" + labels + "}";
}

}  // namespace

void Metrics::Declare(const std::string& name, Type type, std::string help,
                      std::vector<double> buckets) {
  Family& f = families_[name];
  f.type = type;
  f.help = std::move(help);
  f.buckets = std::move(buckets);
}

Metrics::Family* Metrics::Find(const std::string& name) {
  auto it = families_.find(name);
  return it == families_.end() ? nullptr : &it->second;
}

void Metrics::Add(const std::string& name, const std::string& labels, double by) {
  if (Family* f = Find(name)) f->values[labels] += by;
}

void Metrics::Set(const std::string& name, const std::string& labels, double value) {
  if (Family* f = Find(name)) f->values[labels] = value;
}

void Metrics::Observe(const std::string& name, const std::string& labels, double value) {
  Family* f = Find(name);
  if (!f || f->type != Type::kHistogram) return;
  Histogram& h = f->histograms[labels];
  if (h.counts.empty()) h.counts.assign(f->buckets.size(), 0);
  auto it = std::lower_bound(f->buckets.begin(), f->buckets.end(), value);
  if (it != f->buckets.end()) ++h.counts[static_cast<size_t>(it - f->buckets.begin())];
  ++h.count;
  h.sum += value;
}

void Metrics::AddCollector(std::function<void(Metrics&)> collector) {
  collectors_.push_back(std::move(collector));
}

double Metrics::Value(const std::string& name, const std::string& labels) const {
  auto f = families_.find(name);
  if (f == families_.end()) return 0;
  auto v = f->second.values.find(labels);
  return v == f->second.values.end() ? 0 : v->second;
}

std::string Metrics::Render() {
  for (auto& c : collectors_) c(*this);
  std::string out;
  for (const auto& [name, f] : families_) {
    static const char* kTypes[] = {"counter", "gauge", "histogram"};
    out += "# HELP " + name + " " + f.help + "\n";
    out += "# TYPE " + name + " " + kTypes[static_cast<int>(f.type)] + "\n";
    if (f.type != Type::kHistogram) {
      if (f.values.empty() && f.type == Type::kCounter) out += name + " 0\n";
      for (const auto& [labels, v] : f.values) out += Sample(name, labels) + " " + Num(v) + "\n";
      continue;
    }
    for (const auto& [labels, h] : f.histograms) {
      std::string sep = labels.empty() ? "" : ",";
      uint64_t cumulative = 0;
      for (size_t i = 0; i < f.buckets.size(); ++i) {
        cumulative += h.counts[i];
        out += name + "_bucket{" + labels + sep + "le=\"" + Num(f.buckets[i]) + "\"} " +
               std::to_string(cumulative) + "\n";
      }
      out += name + "_bucket{" + labels + sep + "le=\"+Inf\"} " + std::to_string(h.count) + "\n";
      out += Sample(name + "_sum", labels) + " " + Num(h.sum) + "\n";
      out += Sample(name + "_count", labels) + " " + std::to_string(h.count) + "\n";
    }
  }
  return out;
}

}  // namespace limbic::runtime
