#include "memory/encoder/safetensors.h"
