#define _GNU_SOURCE
#include "thread_credentials.h"
#include <sys/syscall.h>
#include <unistd.h>

int appex_bench_set_thread_euid(unsigned int uid) { return (int)syscall(SYS_setresuid, -1, (long)uid, -1); }
