// psi-thrash: memory stall confined to one cgroup, for jetsam-bench's PSI row.
//
//   psi-thrash PROCS_FILE ANON_MIB READERS FILE
//
// Joins the cgroup whose `cgroup.procs` is PROCS_FILE (before it allocates anything), holds
// ANON_MIB of anonymous memory, then READERS children read FILE over and over, dropping it
// from the page cache after each pass. With the cgroup's limit a little above ANON_MIB, every
// read waits on reclaim and refaults inside that cgroup: its tasks stall on memory (PSI
// "some"), and nothing outside it is short of anything. Runs until killed.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: psi-thrash PROCS_FILE ANON_MIB READERS FILE\n");
        return 2;
    }
    int procs = open(argv[1], O_WRONLY);
    if (procs < 0 || dprintf(procs, "%d", (int)getpid()) < 0) {
        perror(argv[1]);
        return 1;
    }
    close(procs);
    size_t anon = (size_t)atoi(argv[2]) << 20;
    int readers = atoi(argv[3]);
    char *held = mmap(NULL, anon, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (held == MAP_FAILED) return 1;
    for (size_t at = 0; at < anon; at += 4096) held[at] = 1;
    for (int r = 0; r < readers; r++) {
        if (fork() != 0) continue;
        static char buffer[1 << 16];
        for (;;) {
            int fd = open(argv[4], O_RDONLY);
            if (fd < 0) _exit(1);
            while (read(fd, buffer, sizeof buffer) > 0) {}
            posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
            close(fd);
        }
    }
    for (;;) pause();
}
