// Making one system call through one of the kernel's ABIs. A 64-bit x86 process can also
// enter the kernel through the i386 table (int 0x80, i386 numbers, 32-bit registers) and
// the x32 table (the syscall instruction with __X32_SYSCALL_BIT in the number); a seccomp
// filter that checks only x86_64 numbers would let those through.
#include "probe.h"
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#define X32_SYSCALL_BIT 0x40000000L

const char *probe_abi_name(enum probe_abi abi) {
    switch (abi) {
    case PROBE_ABI_I386: return "i386";
    case PROBE_ABI_X32: return "x32";
    default: return "native";
    }
}

int probe_abi_available(enum probe_abi abi) {
#if defined(__x86_64__)
    (void)abi;
    return 1;
#else
    return abi == PROBE_ABI_NATIVE;
#endif
}

static const struct probe_syscall *table(enum probe_abi abi) {
#if defined(__x86_64__)
    if (abi == PROBE_ABI_I386) return probe_i386_syscalls;
    if (abi == PROBE_ABI_X32) return probe_x32_syscalls;
#endif
    return abi == PROBE_ABI_NATIVE ? probe_native_syscalls : NULL;
}

long probe_syscall_number(enum probe_abi abi, const char *name) {
    const struct probe_syscall *t = table(abi);
    for (; t && t->name; t++) {
        if (!strcmp(t->name, name)) return t->number;
    }
    return -1;
}

#if defined(__x86_64__)
// int 0x80 takes eax = number and ebx, ecx, edx, esi, edi, ebp = arguments, and answers in
// eax. rbp is saved around the call by hand (it may be the frame pointer), below the red
// zone the compiler may keep live data in; the kernel zeroes r8-r11 on the way back.
static long int80(long nr, const unsigned long a[6]) {
    long ret;
    register unsigned long a5 __asm__("r12") = a[5];
    __asm__ volatile("sub $128, %%rsp\n\t"
                     "push %%rbp\n\t"
                     "mov %%r12, %%rbp\n\t"
                     "int $0x80\n\t"
                     "pop %%rbp\n\t"
                     "add $128, %%rsp"
                     : "=a"(ret)
                     : "a"(nr), "b"(a[0]), "c"(a[1]), "d"(a[2]), "S"(a[3]), "D"(a[4]), "r"(a5)
                     : "memory", "cc", "r8", "r9", "r10", "r11");
    return (long)(int)ret; // a 32-bit answer
}

// A kernel without IA32 emulation (or booted with ia32_emulation=0) faults int 0x80 with
// SIGSEGV; that says "no such ABI here", not "the sandbox stopped it". A seccomp kill is
// SIGSYS and is never caught.
static sigjmp_buf fault;
static void on_fault(int sig) {
    (void)sig;
    siglongjmp(fault, 1);
}
#endif

long probe_invoke(enum probe_abi abi, long nr, const unsigned long a[6], int *unavailable) {
    *unavailable = 0;
    switch (abi) {
    case PROBE_ABI_NATIVE: return syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
#if defined(__x86_64__)
    case PROBE_ABI_X32:
        // The kernel answers ENOSYS itself when built without CONFIG_X86_X32_ABI.
        return syscall(nr | X32_SYSCALL_BIT, a[0], a[1], a[2], a[3], a[4], a[5]);
    case PROBE_ABI_I386: {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_fault;
        sigaction(SIGSEGV, &sa, &old);
        long r;
        if (sigsetjmp(fault, 1)) {
            *unavailable = 1;
            r = -ENOSYS;
        } else {
            r = int80(nr, a);
        }
        sigaction(SIGSEGV, &old, NULL);
        if (r < 0 && r > -4096) {
            errno = (int)-r;
            return -1;
        }
        return r;
    }
#endif
    default:
        errno = ENOSYS;
        *unavailable = 1;
        return -1;
    }
}
