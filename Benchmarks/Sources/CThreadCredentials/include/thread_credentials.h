#ifndef APPEX_BENCH_THREAD_CREDENTIALS_H
#define APPEX_BENCH_THREAD_CREDENTIALS_H

/// Sets the calling thread's effective uid only (raw setresuid: glibc's wrapper would change
/// every thread of the process), keeping the real and saved uids, so a thread of a root process
/// can connect as another uid (SO_PEERCRED records the effective uid at connect) and come back
/// to 0. Returns 0, or -1 with errno set.
int appex_bench_set_thread_euid(unsigned int uid);

#endif
