// Retry and rate policy for deliveries: pure, deterministic functions the
// Outbox applies (the random draw for jitter is passed in).
#pragma once

#include <algorithm>
#include <cmath>

#include "base/time.h"

namespace limbic::effectors {

struct RetryPolicy {
  int max_attempts = 5;
  TimeMs base_backoff = 1000;
  TimeMs max_backoff = 5 * 60 * 1000;
  double jitter = 0.2;

  // Delay before attempt `attempt + 1`: base * 2^(attempt-1), capped, then
  // scaled by 1 +- jitter (random01 in [0, 1)).
  TimeMs Backoff(int attempt, double random01) const {
    double d = static_cast<double>(base_backoff) * std::exp2(std::max(0, attempt - 1));
    d = std::min(d, static_cast<double>(max_backoff));
    d *= 1.0 + jitter * (2.0 * random01 - 1.0);
    return std::max<TimeMs>(1, static_cast<TimeMs>(d));
  }
  // True when `attempt` was the last one allowed.
  bool GiveUp(int attempt) const { return attempt >= max_attempts; }
};

// Token bucket: `rate` tokens per second, at most `burst` saved up.
class RateLimiter {
 public:
  RateLimiter(double rate, double burst) : rate_(rate), burst_(burst > 0 ? burst : std::max(1.0, rate)), tokens_(burst_) {}
  bool TryTake(TimeMs now) {
    Refill(now);
    if (tokens_ < 1) return false;
    tokens_ -= 1;
    return true;
  }
  // When the next token is there.
  TimeMs NextAvailable(TimeMs now) {
    Refill(now);
    if (tokens_ >= 1) return now;
    return now + static_cast<TimeMs>(std::ceil((1 - tokens_) * 1000.0 / rate_));
  }

 private:
  void Refill(TimeMs now) {
    if (last_ >= 0 && now > last_) tokens_ = std::min(burst_, tokens_ + rate_ * static_cast<double>(now - last_) / 1000.0);
    if (now > last_) last_ = now;
  }
  double rate_, burst_, tokens_;
  TimeMs last_ = -1;
};

}  // namespace limbic::effectors
