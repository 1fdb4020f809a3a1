// The `limbic` binary: the command line, run on a thread with a deep stack.
//
// Stored records may nest deeper than any bound limbic sets today: an older
// limbic stored what it was sent, and the reader is never stricter than the
// writer. limbic's own walks over stored JSON keep their own stacks, but
// nlohmann::json's copy, comparison and serialisation recurse once per
// level. So every thread of the process (the command's, the loop's, every
// std::thread it starts) gets kStackBytes of stack: reserved address space,
// of which only what a walk touches is ever backed by memory. A level costs
// about 100-300 bytes of stack, so 256 MiB holds records nested about a
// million deep: deeper than a 1 MiB request body (api.body_limit) can make.
#include <pthread.h>

#include <cstdio>
#include <cstring>

#include "runtime/cli/cli.h"

namespace {

constexpr size_t kStackBytes = size_t{256} << 20;

struct Args {
  int argc;
  char** argv;
  int rc = 1;
};

void* RunCliThread(void* arg) {
  auto* a = static_cast<Args*>(arg);
  a->rc = limbic::runtime::RunCli(a->argc, a->argv);
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  // Answered before the command line is built: scripts ask this often.
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::puts("limbic " LIMBIC_VERSION);
    return 0;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  Args args{argc, argv};
  // Threads created later without attributes (std::thread, RocksDB's) too.
  if (pthread_attr_setstacksize(&attr, kStackBytes) != 0 ||
      pthread_setattr_default_np(&attr) != 0) {
    pthread_attr_destroy(&attr);
    return limbic::runtime::RunCli(argc, argv);
  }
  pthread_t thread;
  int err = pthread_create(&thread, &attr, RunCliThread, &args);
  pthread_attr_destroy(&attr);
  if (err != 0) {
    std::fprintf(stderr, "limbic: warning: no thread with a deep stack (%s)\n", std::strerror(err));
    return limbic::runtime::RunCli(argc, argv);
  }
  pthread_join(thread, nullptr);
  return args.rc;
}
