// glibc's malloc_trim, which Swift's Glibc module does not export: the
// server hands pages that pruning freed back to the system (MemoryReturn).
#pragma once
#if defined(__linux__)
#include <malloc.h>
#endif
