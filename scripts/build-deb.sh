#!/usr/bin/env bash
# Builds cellpath's Debian packages from a tree `make install DESTDIR=ROOT PREFIX=/usr` made:
#   OUT/cellpath_VERSION_ARCH.deb         the executables (stripped), man page, udev rules,
#                                         tmpfiles.d entry, systemd units, completions, docs
#   OUT/cellpath-dbgsym_VERSION_ARCH.deb  their debug symbols, by build id (as Debian's dbgsym)
# Depends comes from dpkg-shlibdeps on the executables, plus the package of each library they
# load with dlopen (listed below: dpkg-shlibdeps cannot see those).
# Usage: scripts/build-deb.sh ROOT OUT
set -euo pipefail

root=$(realpath "$1")
out=$(realpath -m "$2")
here=$(cd "$(dirname "$0")/.." && pwd)
packaging=$here/packaging
# Loaded with dlopen on first use (Sources/CCurl): their packages are dependencies too.
dlopened=(libcurl.so.4)

version=$("$root/usr/bin/cellpath" --version | awk '{ print $2 }')
# Who the packages name as their maintainer: DEB_MAINTAINER, else the git identity.
maintainer=${DEB_MAINTAINER:-"$(git -C "$here" config user.name) <$(git -C "$here" config user.email)>"}
[ "$maintainer" != " <>" ] || maintainer="cellpath developers <cellpath@users.noreply.github.com>"
architecture=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
debug=$work/dbgsym
mkdir -p "$out" "$debug/DEBIAN"

# Strip the executables; their debug information goes to the dbgsym package by build id.
executables=("$root/usr/bin/cellpath" "$root"/usr/libexec/cellpath/*)
build_ids=()
for executable in "${executables[@]}"; do
    # The regex engine (_StringProcessing's string algorithms pull it in) adds 1.4 MB to each
    # executable; cellpath's own CellpathCore/TextSearch.swift does what it needs instead.
    if nm "$executable" | grep '_RegexParser' >/dev/null; then
        echo "build-deb: $executable links Swift's regex engine: use TextSearch (replacingEvery, range(ofText:)) instead of replacing, firstRange, trimmingPrefix or split with a string" >&2
        exit 1
    fi
    id=$(readelf -n "$executable" | awk '/Build ID:/ { print $3 }')
    [ -n "$id" ] || { echo "build-deb: $executable has no build id" >&2; exit 1; }
    build_ids+=("$id")
    symbols=$debug/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
    mkdir -p "$(dirname "$symbols")"
    objcopy --only-keep-debug --compress-debug-sections "$executable" "$symbols"
    chmod 0644 "$symbols"
    strip --remove-section=.comment --remove-section=.note "$executable"
    objcopy --add-gnu-debuglink="$symbols" "$executable"
done

# What the package adds to `make install`'s tree.
install -D -m 0644 "$packaging/systemd/cellpath-serve.service" "$root/usr/lib/systemd/system/cellpath-serve.service"
install -D -m 0644 "$packaging/systemd/cellpath-field@.service" "$root/usr/lib/systemd/system/cellpath-field@.service"
install -D -m 0644 "$packaging/systemd/cellpath-field@.timer" "$root/usr/lib/systemd/system/cellpath-field@.timer"
install -D -m 0644 "$here/udev/cellpath.tmpfiles.conf" "$root/usr/lib/tmpfiles.d/cellpath.conf"
install -D -m 0644 "$packaging/cellpath.conf" "$root/etc/cellpath/cellpath.conf"
docs=$root/usr/share/doc/cellpath
install -d "$docs"
install -m 0644 "$here/README.md" "$here"/docs/*.md "$docs/"
# As dh_compress does: documentation over 4 KiB compressed (0.6 MB of Markdown → 0.2 MB).
find "$docs" -name '*.md' -size +4k -exec gzip -9n {} +
install -m 0644 "$packaging/deb/copyright" "$docs/copyright"
install -D -m 0644 "$packaging/deb/lintian-overrides" "$root/usr/share/lintian/overrides/cellpath"
date=$(date -R -d "@${SOURCE_DATE_EPOCH:-$(git -C "$here" log -1 --format=%ct 2>/dev/null || date +%s)}")
commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
printf 'cellpath (%s) unstable; urgency=medium\n\n  * Built from commit %s.\n\n -- %s  %s\n' \
    "$version" "$commit" "$maintainer" "$date" | gzip -9n > "$docs/changelog.gz"
gzip -9nf "$root/usr/share/man/man1/cellpath.1"
chmod -R u=rwX,go=rX "$root/usr" "$root/etc"

# Depends: what the executables link, and what they load with dlopen.
mkdir -p "$work/source/debian"
printf 'Source: cellpath\n\nPackage: cellpath\nArchitecture: any\n' > "$work/source/debian/control"
linked=$(cd "$work/source" && dpkg-shlibdeps -O "${executables[@]}" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
for library in "${dlopened[@]}"; do
    path=$(ldconfig -p | awk -v lib="$library" '$1 == lib { print $NF; exit }')
    [ -n "$path" ] || { echo "build-deb: $library is not installed" >&2; exit 1; }
    package=$(dpkg -S "$(realpath "$path")" | head -1 | cut -d: -f1)
    linked="$linked, $package"
done

mkdir -p "$root/DEBIAN"
install -m 0755 "$packaging/deb/postinst" "$packaging/deb/postrm" "$packaging/deb/prerm" "$root/DEBIAN/"
echo /etc/cellpath/cellpath.conf > "$root/DEBIAN/conffiles"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s|@MAINTAINER@|$maintainer|" -e "s/@ARCHITECTURE@/$architecture/" -e "s/@INSTALLED_SIZE@/$size/" \
    -e "s/@DEPENDS@/$linked/" "$packaging/deb/control.in" > "$root/DEBIAN/control"
(cd "$root" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -printf '%P\0' \
    | sort -z | xargs -0 md5sum > DEBIAN/md5sums)
dpkg-deb --root-owner-group -Zxz --build "$root" "$out/cellpath_${version}_${architecture}.deb" >/dev/null

cat > "$debug/DEBIAN/control" <<CONTROL
Package: cellpath-dbgsym
Source: cellpath
Version: $version
Architecture: $architecture
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$debug" | cut -f1)
Depends: cellpath (= $version)
Section: debug
Priority: optional
Auto-Built-Package: debug-symbols
Build-Ids: ${build_ids[*]}
Description: debug symbols for cellpath
CONTROL
dpkg-deb --root-owner-group -Zxz --build "$debug" "$out/cellpath-dbgsym_${version}_${architecture}.deb" >/dev/null
echo "$out/cellpath_${version}_${architecture}.deb"
