#include "memory/encoder/bert.h"
