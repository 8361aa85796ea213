// Header-only: the module exists to import <malloc.h> on glibc.
#include "CSystemMemory.h"
