/*
 * appex/extension_unavailable.h - marks declarations an app extension may not use.
 *
 * The counterpart of NS_EXTENSION_UNAVAILABLE: a library shared by a host application and
 * its extensions marks its host-only functions, and extension code that calls one fails to
 * compile, with the reason, instead of failing at run time inside the sandbox.
 *
 *     int notes_open_main_window(void) APPEX_EXTENSION_UNAVAILABLE("extensions have no windows");
 *
 * Compile extension code with -DAPPEX_EXTENSION=1 (or -DAPPEX_EXTENSION); host code without.
 * Under APPEX_EXTENSION the macro is clang's and GCC's (12 and later) `unavailable`
 * attribute: any use of the declaration is an error that quotes the message. Compilers
 * without it get `deprecated`, a warning with the same message. Elsewhere it is empty.
 *
 * Docs/extension-safe-api.md describes this header, its Swift counterpart in the SDK, and
 * `appex lint-binary`, which checks the finished executable's imports.
 */
#ifndef APPEX_EXTENSION_UNAVAILABLE_H
#define APPEX_EXTENSION_UNAVAILABLE_H

/* On when APPEX_EXTENSION is defined as non-zero, or defined empty (0 - APPEX_EXTENSION - 1
 * is then 0 - -1, that is 1); off when undefined or 0. */
#if defined(APPEX_EXTENSION) && (APPEX_EXTENSION + 0 != 0 || 0 - APPEX_EXTENSION - 1 == 1)
#if defined(__has_attribute)
#if __has_attribute(unavailable)
#define APPEX_EXTENSION_UNAVAILABLE(msg) __attribute__((unavailable("unavailable in app extensions: " msg)))
#endif
#endif
#ifndef APPEX_EXTENSION_UNAVAILABLE
#define APPEX_EXTENSION_UNAVAILABLE(msg) __attribute__((deprecated("unavailable in app extensions: " msg)))
#endif
#else
#define APPEX_EXTENSION_UNAVAILABLE(msg)
#endif

#endif /* APPEX_EXTENSION_UNAVAILABLE_H */
