/* The header is the whole of this target. Compiling it here, on its own, keeps it
 * self-contained: it must build with nothing included before it. */
#include "appex/extension_unavailable.h"
