// Internal to state/reduce*.cc: one event being reduced -- its context for
// error messages, and access to the records it changes (reducer.h).
#pragma once

#include <string>
#include <string_view>

#include "state/reducer.h"

namespace limbic::state::reduce {

// One event being reduced: its context for error messages and record access.
class Step {
 public:
  Step(const Event& e, Overlay* o) : e_(e), o_(o), ts_(FormatTime(e.ts)) {}

  // The record, or NotFound naming it.
  Result<json> Need(Pool pool, const std::string& id, std::string_view what) {
    return Found(o_->Get(pool, id), id, what);
  }
  // The record, to be changed and put back (Put or Delete) by this event:
  // moved out of the overlay when the overlay holds it (Overlay::Take).
  Result<json> Take(Pool pool, const std::string& id, std::string_view what) {
    return Found(o_->Take(pool, id), id, what);
  }
  // The percept, typed, or NotFound naming it.
  Result<PerceptRecord> NeedPercept(const std::string& id) { return Found(o_->GetPercept(id), id, "percept"); }
  // The percept, to be changed and put back (PutPercept or Delete).
  Result<PerceptRecord> TakePercept(const std::string& id) { return Found(o_->TakePercept(id), id, "percept"); }
  // A thread or action, to be changed and put back (PutFlat or Delete).
  Result<FlatRecord> TakeFlat(Pool pool, const std::string& id, std::string_view what) {
    return Found(o_->TakeFlat(pool, id), id, what);
  }
  Result<bool> Contains(Pool pool, const std::string& id) { return o_->Contains(pool, id); }
  Status MustNotExist(Pool pool, const std::string& id, std::string_view what) {
    Result<bool> exists = o_->Contains(pool, id);
    if (!exists.ok()) return exists.status();
    if (*exists)
      return Status::AlreadyExists(Where() + ": " + std::string(what) + " " + id + " already exists");
    return Status::OK();
  }
  // NotFound naming the record unless it exists (the record is not read).
  Status MustExist(Pool pool, const std::string& id, std::string_view what) {
    Result<bool> exists = o_->Contains(pool, id);
    if (!exists.ok()) return exists.status();
    if (!*exists) return Status::NotFound(Where() + ": " + std::string(what) + " " + id + " not found");
    return Status::OK();
  }
  Status Wrong(std::string_view what, const std::string& id, const std::string& why) {
    return Status::FailedPrecondition(Where() + ": " + std::string(what) + " " + id + " " + why);
  }
  void Put(Pool pool, const std::string& id, json rec) { o_->Put(pool, id, std::move(rec), e_.seq); }
  void PutPercept(const std::string& id, PerceptRecord rec) { o_->PutPercept(id, std::move(rec), e_.seq); }
  void PutFlat(Pool pool, const std::string& id, FlatRecord rec) { o_->PutFlat(pool, id, std::move(rec), e_.seq); }
  void Delete(Pool pool, const std::string& id) { o_->Delete(pool, id, e_.seq); }

  // The record `r` holds, or NotFound naming it.
  template <typename T>
  Result<T> Found(Result<std::optional<T>> r, const std::string& id, std::string_view what) const {
    if (!r.ok()) return r.status();
    if (!r->has_value()) return Status::NotFound(Where() + ": " + std::string(what) + " " + id + " not found");
    return std::move(**r);
  }

  std::string Where() const {
    return std::string(EventTypeName(e_.type)) + " seq " + std::to_string(e_.seq);
  }
  uint64_t seq() const { return e_.seq; }
  const std::string& ts() const { return ts_; }
  std::string Str(const char* key) const { return e_.Str(key); }
  const json& F() const { return e_.fields; }
  bool Has(const char* key) const { return e_.fields.contains(key); }

 private:
  const Event& e_;
  Overlay* o_;
  std::string ts_;
};

}  // namespace limbic::state::reduce
