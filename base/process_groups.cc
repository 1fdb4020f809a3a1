#include "base/process_groups.h"

#include <dirent.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "base/env.h"

namespace limbic {

using nlohmann::json;

namespace {

constexpr std::string_view kHeartbeat = "heartbeat.json";

std::string ReadSmallFile(const std::string& path) {
  auto text = Env::Default()->ReadFileToString(path);
  return text.ok() ? *text : std::string();
}

// The parts of /proc/PID/stat after "pid (comm)": the name may hold spaces
// and parentheses, so fields are counted from the last ')'.
bool ParseStat(const std::string& text, ProcStat* out) {
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) return false;
  char state = 0;
  long long pgid = 0;
  unsigned long long start = 0;
  // Fields 3..22: state ppid pgrp session tty_nr tpgid flags minflt cminflt
  // majflt cmajflt utime stime cutime cstime priority nice num_threads
  // itrealvalue starttime.
  if (std::sscanf(text.c_str() + paren + 1,
                  " %c %*d %lld %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d "
                  "%llu",
                  &state, &pgid, &start) != 3)
    return false;
  out->state = state;
  out->pgid = static_cast<pid_t>(pgid);
  out->start_ticks = start;
  return true;
}

uint64_t StartOf(pid_t pid) {
  auto st = ReadProcStat(pid);
  return st.ok() ? st->start_ticks : 0;
}

struct Identity {
  std::string boot_id;
  pid_t pid = 0;
  uint64_t start = 0;
};

// Whether the process `pid` that started at `start` still runs.
bool Alive(pid_t pid, uint64_t start) {
  auto st = ReadProcStat(pid);
  return st.ok() && st->start_ticks == start && st->state != 'Z';
}

struct Record {
  pid_t pgid = 0;
  uint64_t leader_start = 0, recorded_at = 0;
  Identity owner;
  std::string argv0;
};

bool ParseRecord(const std::string& text, Record* r) {
  json j = json::parse(text, nullptr, false);
  auto count = [&](const char* key, uint64_t* out) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_unsigned()) return false;
    *out = it->get<uint64_t>();
    return true;
  };
  if (!j.is_object()) return false;
  uint64_t pgid = 0, owner_pid = 0;
  if (!count("pgid", &pgid) || !count("leader_start", &r->leader_start) ||
      !count("recorded_at", &r->recorded_at) || !count("owner_pid", &owner_pid) ||
      !count("owner_start", &r->owner.start))
    return false;
  if (pgid <= 1 || pgid > 1u << 30 || owner_pid > 1u << 30) return false;
  if (!j.contains("boot_id") || !j["boot_id"].is_string()) return false;
  r->pgid = static_cast<pid_t>(pgid);
  r->owner.pid = static_cast<pid_t>(owner_pid);
  r->owner.boot_id = j["boot_id"].get<std::string>();
  if (j.contains("argv0") && j["argv0"].is_string()) r->argv0 = j["argv0"].get<std::string>();
  return true;
}

// The live (not zombie) processes of group `pgid` in `procs`.
std::vector<const ProcStat*> Members(const std::vector<ProcStat>& procs, pid_t pgid) {
  std::vector<const ProcStat*> out;
  for (const ProcStat& p : procs)
    if (p.pgid == pgid && p.state != 'Z') out.push_back(&p);
  return out;
}

// Polls until no group of `pgids` has a live process or `ms` pass; returns
// the groups that still have one.
std::vector<pid_t> WaitGone(std::vector<pid_t> pgids, TimeMs ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    std::vector<ProcStat> procs = ListProcesses();
    std::erase_if(pgids, [&](pid_t g) { return Members(procs, g).empty(); });
    if (pgids.empty() || std::chrono::steady_clock::now() >= deadline) return pgids;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::mutex g_current_mu;
std::shared_ptr<ProcessGroupJournal> g_current;

}  // namespace

Result<ProcStat> ReadProcStat(pid_t pid) {
  ProcStat st;
  st.pid = pid;
  std::string text = ReadSmallFile("/proc/" + std::to_string(pid) + "/stat");
  if (text.empty() || !ParseStat(text, &st))
    return Status::NotFound("no process " + std::to_string(pid));
  return st;
}

std::vector<ProcStat> ListProcesses() {
  std::vector<ProcStat> out;
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  while (dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end) continue;
    auto st = ReadProcStat(static_cast<pid_t>(pid));
    if (st.ok()) out.push_back(*st);
  }
  ::closedir(proc);
  return out;
}

uint64_t BootTicksNow() {
  timespec ts{};
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
  const uint64_t hz = static_cast<uint64_t>(::sysconf(_SC_CLK_TCK));
  return static_cast<uint64_t>(ts.tv_sec) * hz +
         static_cast<uint64_t>(ts.tv_nsec) / (1000000000 / hz);
}

std::string BootId() {
  std::string id = ReadSmallFile("/proc/sys/kernel/random/boot_id");
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

Result<std::shared_ptr<ProcessGroupJournal>> ProcessGroupJournal::Open(std::string dir) {
  LIMBIC_RETURN_IF_ERROR(Env::Default()->CreateDirs(dir));
  return std::shared_ptr<ProcessGroupJournal>(new ProcessGroupJournal(std::move(dir)));
}

ProcessGroupJournal::ProcessGroupJournal(std::string dir)
    : dir_(std::move(dir)),
      boot_id_(BootId()),
      owner_pid_(::getpid()),
      owner_start_(StartOf(::getpid())) {}

ProcessGroupJournal::~ProcessGroupJournal() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (heartbeat_.joinable()) heartbeat_.join();
}

std::string ProcessGroupJournal::RecordPath(pid_t pgid) const {
  return dir_ + "/" + std::to_string(pgid) + ".json";
}

void ProcessGroupJournal::Started(pid_t pgid, std::string_view argv0) {
  auto leader = ReadProcStat(pgid);
  if (!leader.ok() || boot_id_.empty()) return;  // nothing that could prove it later
  json r = {{"pgid", static_cast<uint64_t>(pgid)},
            {"leader_start", leader->start_ticks},
            {"recorded_at", BootTicksNow()},
            {"boot_id", boot_id_},
            {"owner_pid", static_cast<uint64_t>(owner_pid_)},
            {"owner_start", owner_start_},
            {"argv0", std::string(argv0)}};
  (void)Env::Default()->WriteFileAtomic(
      RecordPath(pgid), r.dump(-1, ' ', false, json::error_handler_t::replace) + "\n",
      FileDurability::kDerived);
}

void ProcessGroupJournal::Ended(pid_t pgid) { (void)Env::Default()->RemoveFile(RecordPath(pgid)); }

void ProcessGroupJournal::Beat() {
  json hb = {{"boot_id", boot_id_},
             {"owner_pid", static_cast<uint64_t>(owner_pid_)},
             {"owner_start", owner_start_},
             {"at", BootTicksNow()}};
  (void)Env::Default()->WriteFileAtomic(dir_ + "/" + std::string(kHeartbeat), hb.dump() + "\n",
                                        FileDurability::kDerived);
}

void ProcessGroupJournal::StartHeartbeat(TimeMs every) {
  if (heartbeat_.joinable()) return;
  Beat();
  heartbeat_ = std::thread([this, every] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(every), [this] { return stop_; })) {
      lock.unlock();
      Beat();
      lock.lock();
    }
  });
}

std::vector<LeftoverGroup> ProcessGroupJournal::EndLeftovers(TimeMs grace) {
  using Outcome = LeftoverGroup::Outcome;
  Env* env = Env::Default();
  std::vector<LeftoverGroup> report;
  auto names = env->GetChildren(dir_);
  if (!names.ok()) return report;

  // The previous run's last sign of life: `beat_owner` was alive at `beat_at`.
  Identity beat_owner;
  uint64_t beat_at = 0;
  {
    json hb = json::parse(ReadSmallFile(dir_ + "/" + std::string(kHeartbeat)), nullptr, false);
    if (hb.is_object() && hb["at"].is_number_unsigned() && hb["owner_pid"].is_number_unsigned() &&
        hb["owner_start"].is_number_unsigned() && hb["boot_id"].is_string()) {
      beat_at = hb["at"].get<uint64_t>();
      beat_owner = {hb["boot_id"].get<std::string>(),
                    static_cast<pid_t>(hb["owner_pid"].get<uint64_t>()),
                    hb["owner_start"].get<uint64_t>()};
    }
  }

  const std::vector<ProcStat> procs = ListProcesses();
  const pid_t own_group = ::getpgrp();
  std::vector<std::string> remove;
  std::map<pid_t, size_t> to_end;  // group -> index in report
  for (const std::string& name : *names) {
    const std::string path = dir_ + "/" + name;
    if (name.starts_with(".") && name.ends_with(".tmp")) {
      remove.push_back(path);  // a record a killed run was writing
      continue;
    }
    if (name == kHeartbeat || !name.ends_with(".json")) continue;
    LeftoverGroup g;
    Record r;
    if (!ParseRecord(ReadSmallFile(path), &r) || name != std::to_string(r.pgid) + ".json") {
      g.outcome = Outcome::kUnreadable;
      g.why = path + " is not a process group record";
      report.push_back(std::move(g));
      remove.push_back(path);
      continue;
    }
    g.pgid = r.pgid;
    g.argv0 = r.argv0;
    g.owner_pid = r.owner.pid;
    if (r.owner.boot_id != boot_id_ || boot_id_.empty()) {
      g.outcome = Outcome::kOtherBoot;
      report.push_back(std::move(g));
      remove.push_back(path);
      continue;
    }
    if (Alive(r.owner.pid, r.owner.start)) {
      g.outcome = Outcome::kOwnerAlive;
      g.why = "limbic pid " + std::to_string(r.owner.pid) + ", which started it, still runs";
      report.push_back(std::move(g));
      continue;
    }
    remove.push_back(path);
    std::vector<const ProcStat*> members = Members(procs, r.pgid);
    g.processes = members.size();
    if (members.empty()) {
      g.outcome = Outcome::kGone;
      report.push_back(std::move(g));
      continue;
    }
    uint64_t until = r.recorded_at;
    if (beat_owner.pid == r.owner.pid && beat_owner.start == r.owner.start &&
        beat_owner.boot_id == r.owner.boot_id)
      until = std::max(until, beat_at);
    // The leader, even a zombie (it still holds its pid), or any process
    // started while the owner held the group.
    bool proven = false, reused = false;
    for (const ProcStat& p : procs)
      if (p.pid == r.pgid) (p.start_ticks == r.leader_start ? proven : reused) = true;
    for (const ProcStat* m : members)
      if (m->start_ticks >= r.leader_start && m->start_ticks <= until) proven = true;
    if (reused || !proven || r.pgid == own_group) {
      g.outcome = Outcome::kNotOurs;
      if (reused)
        g.why = "pid " + std::to_string(r.pgid) +
                " is another process now (its start time is not the recorded leader's)";
      else if (!proven)
        g.why = "none of its " + std::to_string(members.size()) +
                " processes started between the recorded start (tick " +
                std::to_string(r.leader_start) + ") and the run's last sign of life (tick " +
                std::to_string(until) + ")";
      else
        g.why = "it is this process's own group";
      report.push_back(std::move(g));
      continue;
    }
    to_end[r.pgid] = report.size();
    report.push_back(std::move(g));
  }

  if (!to_end.empty()) {
    std::vector<pid_t> groups;
    for (const auto& [pgid, index] : to_end) {
      ::kill(-pgid, SIGTERM);
      groups.push_back(pgid);
    }
    std::vector<pid_t> stubborn = WaitGone(groups, grace);
    for (const auto& [pgid, index] : to_end) report[index].outcome = Outcome::kEnded;
    for (pid_t pgid : stubborn) {
      ::kill(-pgid, SIGKILL);
      report[to_end[pgid]].outcome = Outcome::kKilled;
    }
    // SIGKILL cannot be refused; this only waits for it to land.
    if (!stubborn.empty()) (void)WaitGone(stubborn, 1000);
  }
  for (const std::string& path : remove) (void)env->RemoveFile(path);
  return report;
}

void SetProcessGroupJournal(std::shared_ptr<ProcessGroupJournal> journal) {
  std::lock_guard<std::mutex> lock(g_current_mu);
  g_current = std::move(journal);
}

std::shared_ptr<ProcessGroupJournal> CurrentProcessGroupJournal() {
  std::lock_guard<std::mutex> lock(g_current_mu);
  return g_current;
}

}  // namespace limbic
