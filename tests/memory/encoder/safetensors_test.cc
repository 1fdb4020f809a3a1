// Tests of memory/encoder/safetensors.h.
#include "memory/encoder/safetensors.h"
