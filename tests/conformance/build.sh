#!/bin/bash
# Fetch and build the OCI runtime-tools validation suite, offline after the
# first run. Sourced by tests/conformance/run.sh, which calls
# conformance_build CACHE_DIR; on success it sets SUITE_DIR to a directory
# holding runtimetest and bin/NAME (one program per validation/NAME test).
# On failure it sets SKIP_REASON and returns 1 (run.sh then prints
# "1..0 # skip <reason>").
#
# Source: Debian's own source tarball of golang-github-opencontainers-
# runtime-tools (trixie), fetched from the pool of the Debian archive that
# apt is configured with and checked against the sha256 pinned below (the
# one trixie's signed Sources index lists). It ships validation/,
# cmd/runtimetest and the Go library; Debian's -dev package ships only the
# library.
#
# Build: GOPATH mode (GO111MODULE=off, GOPROXY=off, nothing downloaded) with
# Debian's golang-go and the golang-*-dev packages below, GOPATH =
# a private dir + /usr/share/gocode. The one import Debian lacks,
# github.com/mndrix/tap-go, is tests/conformance/tap-go/tap.go. runtimetest
# is built with tests/conformance/go-overlay/os_rlimit.go replacing the
# toolchain's os/rlimit.go (it says why). Patches in
# tests/conformance/patches/*.patch are applied in name order (each says
# why in its header). Builds are cached under CACHE_DIR keyed by everything
# that goes into them.

# shellcheck disable=SC2034 # SUITE_DIR and SKIP_REASON are for run.sh
RT_TARBALL=golang-github-opencontainers-runtime-tools_0.9.0.109.ge931285.orig.tar.xz
RT_SHA256=203989a1ea98cf2aaced79155bbda09270b20db19b03376dde91ab12e5e6a0fe
RT_POOL=pool/main/g/golang-github-opencontainers-runtime-tools
RT_IMPORT=github.com/opencontainers/runtime-tools
# Bump when the build steps change, to invalidate cached builds.
RT_BUILD_REV=2

# Import path -> Debian package, for the skip message.
GO_DEPS=(
	"github.com/opencontainers/runtime-spec/specs-go golang-github-opencontainers-specs-dev"
	"github.com/opencontainers/selinux/go-selinux golang-github-opencontainers-selinux-dev"
	"github.com/google/uuid golang-github-google-uuid-dev"
	"github.com/mrunalp/fileutils golang-github-mrunalp-fileutils-dev"
	"github.com/sirupsen/logrus golang-github-sirupsen-logrus-dev"
	"github.com/hashicorp/go-multierror golang-github-hashicorp-go-multierror-dev"
	"github.com/xeipuuv/gojsonschema golang-github-xeipuuv-gojsonschema-dev"
	"github.com/blang/semver/v4 golang-github-blang-semver-dev"
	"github.com/syndtr/gocapability/capability golang-gocapability-dev"
	"golang.org/x/sys/unix golang-golang-x-sys-dev"
	"github.com/urfave/cli golang-github-urfave-cli-dev"
)

CONFORMANCE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# debian_mirrors: base URLs of the Debian archive apt uses (not the
# security archive, whose pool lacks this package), best first.
debian_mirrors() {
	{
		apt-get indextargets --format '$(LABEL) $(REPO_URI)' 2>/dev/null |
			awk '$1 == "Debian" { print $2 }'
		# Before `apt-get update` there are no index targets: read the
		# sources themselves (one-line and deb822 formats).
		cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			awk '$1 == "deb" || $1 == "deb-src" {
				for (i = 2; i <= NF; i++) if ($i ~ /^[a-z+]+:\/\//) { print $i; break } }'
		cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
			awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) print $i }'
	} | grep -v -i security | sed 's,/*$,,' | awk '!seen[$0]++'
}

# fetch_tarball DEST: download the tarball into DEST and check it.
fetch_tarball() {
	local dest="$1" url tmp mirror
	tmp="$dest.part.$$"
	for mirror in $(debian_mirrors); do
		url="$mirror/$RT_POOL/$RT_TARBALL"
		rm -f "$tmp"
		# apt-helper uses apt's own proxy and transport settings.
		if /usr/lib/apt/apt-helper -o APT::Sandbox::User=root download-file "$url" "$tmp" \
			"SHA256:$RT_SHA256" >/dev/null 2>&1 ||
			{ command -v curl >/dev/null && curl -fsSL --max-time 120 -o "$tmp" "$url" 2>/dev/null; } ||
			{ command -v wget >/dev/null && wget -q -T 120 -O "$tmp" "$url" 2>/dev/null; }; then
			if [ "$(sha256sum "$tmp" | cut -d' ' -f1)" = "$RT_SHA256" ]; then
				mv "$tmp" "$dest"
				return 0
			fi
			echo "# $url: sha256 mismatch, ignored" >&2
		fi
	done
	rm -f "$tmp"
	return 1
}

# build_key: hash of everything that goes into a build.
build_key() {
	{
		echo "$RT_SHA256 $RT_BUILD_REV"
		go version
		cat "$CONFORMANCE_DIR/tap-go/tap.go"
		cat "$CONFORMANCE_DIR"/patches/*.patch "$CONFORMANCE_DIR"/go-overlay/*.go 2>/dev/null
		local dep pkgs=()
		for dep in "${GO_DEPS[@]}"; do
			pkgs+=("${dep#* }")
		done
		dpkg-query -W -f='${Package} ${Version}\n' "${pkgs[@]}" 2>/dev/null
	} | sha256sum | cut -c1-16
}

conformance_build() {
	local cache="$1" tarball key out gopath src dep log p
	SKIP_REASON=
	export PATH="$PATH:/usr/lib/go/bin"
	if ! command -v go >/dev/null; then
		SKIP_REASON="no Go toolchain (install golang-go: contrib/install-deps.sh)"
		return 1
	fi
	local missing=()
	for dep in "${GO_DEPS[@]}"; do
		[ -d "/usr/share/gocode/src/${dep%% *}" ] || missing+=("${dep#* }")
	done
	if [ "${#missing[@]}" -gt 0 ]; then
		SKIP_REASON="missing Debian packages ${missing[*]} (contrib/install-deps.sh)"
		return 1
	fi
	mkdir -p "$cache" || { SKIP_REASON="cannot create $cache"; return 1; }

	tarball="$cache/$RT_TARBALL"
	if [ -f "$tarball" ] && [ "$(sha256sum "$tarball" | cut -d' ' -f1)" != "$RT_SHA256" ]; then
		echo "# $tarball: sha256 mismatch, fetching again"
		rm -f "$tarball"
	fi
	if [ ! -f "$tarball" ] && ! fetch_tarball "$tarball"; then
		SKIP_REASON="cannot download $RT_TARBALL from the Debian archive (no network?)"
		return 1
	fi

	key="$(build_key)"
	out="$cache/build-$key"
	SUITE_DIR="$out"
	[ -f "$out/.complete" ] && return 0

	echo "# building runtime-tools validation suite in $out"
	rm -rf "$out" "$out.tmp"
	mkdir -p "$out.tmp/bin"
	gopath="$out.tmp/gopath"
	src="$gopath/src/$RT_IMPORT"
	log="$out.tmp/build.log"
	mkdir -p "$src" "$gopath/src/github.com/mndrix/tap-go"
	tar -xJf "$tarball" -C "$src" --strip-components=1 ||
		{ SKIP_REASON="cannot unpack $tarball"; return 1; }
	cp "$CONFORMANCE_DIR/tap-go/tap.go" "$gopath/src/github.com/mndrix/tap-go/"
	for p in "$CONFORMANCE_DIR"/patches/*.patch; do
		[ -f "$p" ] || continue
		if ! patch -d "$src" -p1 --forward --quiet <"$p" >>"$log" 2>&1; then
			echo "# patch $(basename "$p") failed:"
			sed 's/^/#   /' "$log"
			SKIP_REASON="patch $(basename "$p") does not apply"
			return 1
		fi
	done
	# runtimetest checks its own RLIMIT_NOFILE, which Go >= 1.19 raises at
	# start-up: build it with go-overlay/os_rlimit.go in place of the
	# toolchain's os/rlimit.go (see that file).
	local overlay_arg=() goroot
	goroot="$(go env GOROOT)"
	if [ -f "$goroot/src/os/rlimit.go" ]; then
		printf '{"Replace": {"%s": "%s"}}\n' "$goroot/src/os/rlimit.go" \
			"$CONFORMANCE_DIR/go-overlay/os_rlimit.go" >"$out.tmp/overlay.json"
		overlay_arg=(-overlay "$out.tmp/overlay.json")
	fi
	# Static programs (CGO_ENABLED=0): runtimetest runs inside the busybox
	# rootfs.
	if ! (cd "$src" &&
		export GOPATH="$gopath:/usr/share/gocode" GO111MODULE=off GOPROXY=off GOFLAGS='' \
			GOCACHE="$cache/gocache" CGO_ENABLED=0 GOTOOLCHAIN=local &&
		go build "${overlay_arg[@]}" -trimpath -tags "netgo osusergo" -ldflags "-s -w" \
			-o "$out.tmp/runtimetest" ./cmd/runtimetest &&
		go build -trimpath -ldflags "-s -w" -o "$out.tmp/bin/" ./validation/...) >>"$log" 2>&1; then
		echo "# go build failed:"
		sed 's/^/#   /' "$log" | tail -n 30
		SKIP_REASON="the validation suite does not build (see above)"
		return 1
	fi
	rm -rf "$gopath"
	touch "$out.tmp/.complete"
	mv "$out.tmp" "$out"
	# Keep only this build.
	find "$cache" -maxdepth 1 -name 'build-*' ! -name "build-$key" -exec rm -rf {} +
	return 0
}

# conformance_rootfs_path CACHE_DIR: where conformance_rootfs keeps the
# rootfs tarball for this busybox-static version.
conformance_rootfs_path() {
	echo "$1/rootfs-busybox-$(dpkg-query -W -f='${Version}' busybox-static | tr -c 'A-Za-z0-9.+\n' _).tar.gz"
}

# conformance_rootfs OUT: the rootfs the suite unpacks into every bundle
# (rootfs-$GOARCH.tar.gz): Debian's static busybox and its applets in /bin,
# /etc/passwd and /etc/group, empty /dev, /proc and /sys, root directory
# mode 0755. The suite copies runtimetest into the bundle itself. Built once
# per busybox version, in the cache.
conformance_rootfs() {
	local out="$1" r applet
	r="$(mktemp -d "${TMPDIR:-/tmp}/brig-conformance-rootfs.XXXXXX")" || return 1
	mkdir -p "$r/bin" "$r/dev" "$r/proc" "$r/sys" "$r/etc"
	cp /bin/busybox "$r/bin/busybox"
	for applet in $(/bin/busybox --list); do
		[ "$applet" = busybox ] || ln -s busybox "$r/bin/$applet"
	done
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$r/etc/passwd"
	printf 'root:x:0:\ntty:x:5:\nnogroup:x:65534:\n' >"$r/etc/group"
	chmod 0755 "$r" "$r"/*
	tar --numeric-owner --owner=0 --group=0 -C "$r" -czf "$out.tmp" . &&
		mv "$out.tmp" "$out"
	local rc=$?
	rm -rf "$r"
	return "$rc"
}
