#include "runtime/cli.h"

int main(int argc, char** argv) { return limbic::runtime::RunCli(argc, argv); }
