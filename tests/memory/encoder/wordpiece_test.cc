// Tests of memory/encoder/wordpiece.h.
#include "memory/encoder/wordpiece.h"
