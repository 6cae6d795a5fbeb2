// Appex's version for `appex-sandbox-init --version`: the same as VERSION at the repository
// root and Sources/AppexVersion (the Swift executables'); VersionTests fails when they differ.
#ifndef APPEX_SANDBOX_INIT_VERSION_H
#define APPEX_SANDBOX_INIT_VERSION_H
#define APPEX_VERSION "0.9.0"
#endif
