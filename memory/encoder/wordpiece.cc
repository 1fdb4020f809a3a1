#include "memory/encoder/wordpiece.h"
