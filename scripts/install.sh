#!/usr/bin/env bash
# Installs (or uninstalls) a release build of Appex under DESTDIR/PREFIX; `make install` and
# `make uninstall` call it, `make deb` installs into a package tree with it.
#
#   scripts/install.sh install|uninstall BIN_DIR
#
# BIN_DIR: the release products directory (swift build -c release --show-bin-path). The
# variables below come from the Makefile (PREFIX, DESTDIR, SYSCONFDIR, ...). The layout is the
# one the executables look for relative to their own file (Docs/deployment.md, "Files"):
# appex-commands, appex-sandbox-init and appex-transfer in ../libexec/appex/, the policies in ../share/appex/.
set -euo pipefail
action=${1:?usage: install.sh install|uninstall BIN_DIR}
bin=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)

PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
BINDIR=${BINDIR:-$PREFIX/bin}
SBINDIR=${SBINDIR:-$PREFIX/sbin}
LIBEXECDIR=${LIBEXECDIR:-$PREFIX/libexec/appex}
DATADIR=${DATADIR:-$PREFIX/share/appex}
MANDIR=${MANDIR:-$PREFIX/share/man}
SYSCONFDIR=${SYSCONFDIR:-/etc}
UNITDIR=${UNITDIR:-$PREFIX/lib/systemd/system}
BASHCOMPDIR=${BASHCOMPDIR:-$PREFIX/share/bash-completion/completions}
ZSHCOMPDIR=${ZSHCOMPDIR:-$PREFIX/share/zsh/site-functions}
FISHCOMPDIR=${FISHCOMPDIR:-$PREFIX/share/fish/vendor_completions.d}
LIBDIR=${LIBDIR:-$PREFIX/lib}
INCLUDEDIR=${INCLUDEDIR:-$PREFIX/include}
PKGCONFIGDIR=${PKGCONFIGDIR:-$LIBDIR/pkgconfig}
# libappex built by `make libappex` (Docs/libappex.md); none: not installed.
LIBAPPEX=${LIBAPPEX:-$root/.build/libappex}
# Man pages made by `make man` (argument-parser's generate-manual plugin); none: none installed.
MANPAGES=${MANPAGES:-$root/.build/man}

d() { printf '%s%s' "$DESTDIR" "$1"; }

# Every file this installs, relative to DESTDIR, but the configuration example.
installed_files() {
    echo "$BINDIR/appex" "$SBINDIR/appexd" "$LIBEXECDIR/appex-commands" "$LIBEXECDIR/appex-sandbox-init"
    echo "$LIBEXECDIR/appex-transfer"
    echo "$UNITDIR/appexd.service"
    echo "$BASHCOMPDIR/appex" "$ZSHCOMPDIR/_appex" "$FISHCOMPDIR/appex.fish"
    echo "$DATADIR/appexd.yaml.example"
    echo "$LIBDIR/libappex.a" "$LIBDIR/libappex.so.1" "$LIBDIR/libappex.so" "$INCLUDEDIR/appex.h" "$PKGCONFIGDIR/appex.pc"
    (cd "$root" && find Policies -type f) | sed "s|^|$DATADIR/|"
    if [ -d "$MANPAGES" ]; then
        for page in $(cd "$MANPAGES" && find . -type f -name '*.[0-9]'); do
            name=$(basename "$page"); echo "$MANDIR/man${name##*.}/$name"
        done
    fi
}

case "$action" in
install)
    [ -n "$bin" ] || { echo "install.sh: BIN_DIR missing" >&2; exit 2; }
    for exe in appex appex-commands appexd appex-sandbox-init appex-transfer; do
        [ -x "$bin/$exe" ] || { echo "install.sh: $bin/$exe is not built (make release)" >&2; exit 1; }
    done
    install -D -m 0755 "$bin/appex" "$(d "$BINDIR/appex")"
    install -D -m 0755 "$bin/appexd" "$(d "$SBINDIR/appexd")"
    install -D -m 0755 "$bin/appex-commands" "$(d "$LIBEXECDIR/appex-commands")"
    install -D -m 0755 "$bin/appex-sandbox-init" "$(d "$LIBEXECDIR/appex-sandbox-init")"
    install -D -m 0755 "$bin/appex-transfer" "$(d "$LIBEXECDIR/appex-transfer")"
    # Debug information only (~100 MB each); symbols, code and its layout stay as built.
    strip --strip-debug "$(d "$BINDIR/appex")" "$(d "$SBINDIR/appexd")" "$(d "$LIBEXECDIR/appex-commands")" \
        "$(d "$LIBEXECDIR/appex-transfer")"
    # Policies: root-owned, writable by no one else, or root refuses them (PolicyDirectoryTrust).
    (cd "$root" && find Policies -type f) | while read -r f; do
        install -D -m 0644 "$root/$f" "$(d "$DATADIR/$f")"
    done
    sed "s|^ExecStart=.*|ExecStart=$SBINDIR/appexd|" "$root/Docs/appexd.service" > "$root/.build/appexd.service"
    install -D -m 0644 "$root/.build/appexd.service" "$(d "$UNITDIR/appexd.service")"
    install -D -m 0644 "$root/Docs/appexd.yaml" "$(d "$DATADIR/appexd.yaml.example")"
    # The configuration only when there is none: never overwrite the administrator's.
    if [ ! -e "$(d "$SYSCONFDIR/appex/appexd.yaml")" ]; then
        install -D -m 0644 "$root/Docs/appexd.yaml" "$(d "$SYSCONFDIR/appex/appexd.yaml")"
    else
        echo "install.sh: keeping the existing $SYSCONFDIR/appex/appexd.yaml (example in $DATADIR/appexd.yaml.example)" >&2
    fi
    # Completions, from argument-parser through the installed front (it hands over to the full tool).
    mkdir -p "$(d "$BASHCOMPDIR")" "$(d "$ZSHCOMPDIR")" "$(d "$FISHCOMPDIR")"
    "$bin/appex" --generate-completion-script bash > "$(d "$BASHCOMPDIR/appex")"
    "$bin/appex" --generate-completion-script zsh > "$(d "$ZSHCOMPDIR/_appex")"
    "$bin/appex" --generate-completion-script fish > "$(d "$FISHCOMPDIR/appex.fish")"
    chmod 0644 "$(d "$BASHCOMPDIR/appex")" "$(d "$ZSHCOMPDIR/_appex")" "$(d "$FISHCOMPDIR/appex.fish")"
    # libappex: the libraries, the header and pkg-config's file (`pkg-config --cflags --libs appex`).
    if [ -f "$LIBAPPEX/libappex.a" ]; then
        install -D -m 0644 "$LIBAPPEX/libappex.a" "$(d "$LIBDIR/libappex.a")"
        install -D -m 0755 "$LIBAPPEX/libappex.so.1" "$(d "$LIBDIR/libappex.so.1")"
        ln -sf libappex.so.1 "$(d "$LIBDIR/libappex.so")"
        install -D -m 0644 "$root/Sources/CAppex/include/appex.h" "$(d "$INCLUDEDIR/appex.h")"
        mkdir -p "$(d "$PKGCONFIGDIR")"
        printf '%s\n' "prefix=$PREFIX" "libdir=$LIBDIR" "includedir=$INCLUDEDIR" "" "Name: appex" \
            "Description: Appex's wire protocol for C: extensions and hosts (Docs/libappex.md)" \
            "Version: $(cat "$root/VERSION")" "Cflags: -I\${includedir}" "Libs: -L\${libdir} -lappex" \
            "Libs.private: -lpthread" > "$(d "$PKGCONFIGDIR/appex.pc")"
        chmod 0644 "$(d "$PKGCONFIGDIR/appex.pc")"
    else
        echo "install.sh: no libappex in $LIBAPPEX (make libappex); not installed" >&2
    fi
    if [ -d "$MANPAGES" ]; then
        for page in $(cd "$MANPAGES" && find . -type f -name '*.[0-9]'); do
            name=$(basename "$page"); section=${name##*.}
            install -D -m 0644 "$MANPAGES/$page" "$(d "$MANDIR/man$section/$name")"
        done
    else
        echo "install.sh: no man pages in $MANPAGES (make man); none installed" >&2
    fi
    ;;
uninstall)
    for f in $(installed_files); do rm -f "$(d "$f")"; done
    # The configuration goes only when it is still the shipped example.
    conf=$(d "$SYSCONFDIR/appex/appexd.yaml")
    if [ -f "$conf" ] && cmp -s "$conf" "$root/Docs/appexd.yaml"; then rm -f "$conf"; fi
    # Directories this made, when empty now (never the state: /var/lib/appex stays).
    for dir in "$DATADIR/Policies/extension-points" "$DATADIR/Policies/syscall-groups" "$DATADIR/Policies/tests" \
               "$DATADIR/Policies" "$DATADIR" "$LIBEXECDIR" "$SYSCONFDIR/appex" "$PKGCONFIGDIR"; do
        rmdir "$(d "$dir")" 2>/dev/null || true
    done
    ;;
*)
    echo "usage: install.sh install|uninstall BIN_DIR" >&2; exit 2 ;;
esac
