// libseccomp, for the filter compiler (AppexSandbox) and syscall-name checks (AppexPolicy).
#include <seccomp.h>
