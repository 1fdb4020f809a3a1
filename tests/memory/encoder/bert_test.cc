// Tests of memory/encoder/bert.h.
#include "memory/encoder/bert.h"
