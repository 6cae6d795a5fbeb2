// glibc's M_ARENA_MAX for Swift, whose Glibc module leaves out <malloc.h>'s constants.
#include "appex_threads.h"
#include <malloc.h>

int appex_malloc_single_arena(void) { return mallopt(M_ARENA_MAX, 1); }
