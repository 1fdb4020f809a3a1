#include "runtime/cli/progress.h"

#include <algorithm>
#include <cmath>

namespace limbic::runtime {

ProgressLine::ProgressLine(Options options) : o_(std::move(options)), start_(o_.now()) {}

void ProgressLine::Update(uint64_t done, uint64_t total, double fraction) {
  if (o_.quiet || finished_) return;
  if (total > 0) fraction = static_cast<double>(done) / static_cast<double>(total);
  fraction = std::clamp(std::isnan(fraction) ? 0.0 : fraction, 0.0, 1.0);
  const bool last = fraction >= 1;
  const double secs = std::chrono::duration<double>(o_.now() - start_).count();
  if (secs < std::chrono::duration<double>(o_.silent_for).count()) return;
  // (a hair up, so 0.29 of the way is 29%, not 28.999...)
  const int tenth = static_cast<int>(fraction * 10 + 1e-9);
  if (!o_.terminal && tenth == printed_tenth_ && !last) return;
  printed_tenth_ = tenth;
  finished_ = last;
  const double rate = secs > 0 ? static_cast<double>(done) / secs : 0;
  std::string counted = std::to_string(done);
  if (total > 0) counted += "/" + std::to_string(total);
  std::string left;
  if (!last && fraction > 0 && secs > 0)
    left = ", " + std::to_string(std::lround(secs * (1 - fraction) / fraction)) + " s left";
  std::fprintf(o_.out, "%s%s: %s %s (%d%%), %.0f/s%s%s", o_.terminal ? "\r" : "", o_.doing.c_str(),
               counted.c_str(), o_.unit.c_str(), static_cast<int>(fraction * 100 + 1e-9), rate, left.c_str(),
               o_.terminal ? "\x1b[K" : "\n");
  if (o_.terminal && last) std::fputc('\n', o_.out);
  std::fflush(o_.out);
}

}  // namespace limbic::runtime
