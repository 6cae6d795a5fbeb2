// The one architecture-specific piece of appex-sandbox-init: issuing a system call.
//
// The init links no C library (main.c says why), so it enters the kernel itself. Each
// function returns the kernel's raw result: the value on success, -errno on failure.
// Only the registers the kernel's calling convention names are used; anything the
// instruction may overwrite is declared clobbered. A new architecture needs its own
// block here (and nothing else: numbers and structures come from the kernel's headers).
#ifndef APPEX_SANDBOX_INIT_SYSCALL_H
#define APPEX_SANDBOX_INIT_SYSCALL_H

#if defined(__x86_64__)

// Number in rax; arguments in rdi, rsi, rdx, r10, r8; result in rax. The instruction
// overwrites rcx (return address) and r11 (flags).
static inline long sys5(long n, long a, long b, long c, long d, long e) {
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
    return ret;
}

#elif defined(__aarch64__)

// Number in x8; arguments in x0..x4; result in x0.
static inline long sys5(long n, long a, long b, long c, long d, long e) {
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
    return x0;
}

#else
#error "appex-sandbox-init: add this architecture's system call convention to syscall.h"
#endif

#endif
