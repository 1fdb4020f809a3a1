// Test helper: which processes of a process group are still alive.
#pragma once

#include <dirent.h>
#include <sys/types.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace limbic::testing {

// The pids of the group `pgid` that are not zombies (a killed orphan stays
// a zombie until its reaper, maybe a container's init that never reaps,
// gets to it: it no longer runs). From /proc/<pid>/stat: "pid (comm) S
// ppid pgrp ...".
inline std::vector<pid_t> LiveGroupMembers(pid_t pgid) {
  std::vector<pid_t> live;
  DIR* proc = opendir("/proc");
  if (!proc) return live;
  while (dirent* e = readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end) continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (std::sscanf(stat.c_str() + paren + 1, " %c %ld %ld", &state, &ppid, &pgrp) != 3) continue;
    if (pgrp == pgid && state != 'Z') live.push_back(static_cast<pid_t>(pid));
  }
  closedir(proc);
  return live;
}

// Polls (bounded by `timeout_ms`) until the group has no live process.
inline bool GroupGone(pid_t pgid, int timeout_ms = 5000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!LiveGroupMembers(pgid).empty()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace limbic::testing
