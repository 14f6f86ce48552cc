#!/usr/bin/env bash
# fetch-nsys.sh: fetches Nsight Systems' command line (nsys 2022.4.2.1) from Debian 12's
# non-free component and packs it into .nsys/ at the repository root (git-ignored), for
# machines without nsys, such as the course's GPU machine, which has no apt and no network.
#
#   scripts/fetch-nsys.sh                  # on a Debian 12 machine with network access
#   .nsys/bin/nsys --version               # anywhere: unpacks itself on first use
#
# Chapter 05's CMake finds .nsys/bin/nsys (cache variable TUTORIAL_NSYS); without it the
# chapter's nsys runs exit 77 (skipped) and say so. Copy .nsys/ along with the repository
# to use it elsewhere: nothing is downloaded at run time.
#
# Its limit: nsys 2022.4 knows the CUDA runtime calls up to CUDA 11.8. On the course's GPU
# machine (CUDA 13, driver 580, H100, 2026-11-24) it captured chapter 05's program and read its
# NVTX ranges, then stopped at "Unknown runtime API function index: 440"
# (cudaGetDeviceProperties_v2, CUDA 12.0): no CUDA tables. Debian 13's 2023.4.4 stops at 486.
# Programs built with CUDA 11.8 (CI's second build) are within its reach: carried to the GPU
# machine with .nsys/, `scripts/gpu-check.sh --prebuilt build-cuda118 --record cuda-11.8` traces
# them (chapter 05's nsys runs; on the H100, 2026-11-25, every CUDA table filled).
#
# What .nsys/ holds:
#   nsys-2022.4.2.1.tar.xz  the two halves nsys needs, side by side as nsys expects them:
#     target-linux-x64/  from nsight-systems-target: nsys itself, its injection libraries,
#                        CUPTI 11.8 and the stats reports (Python scripts);
#     host-linux-x64/    from nsight-systems (the GUI package): QdstrmImporter, which turns
#                        the raw capture (.qdstrm) into a report (.nsys-rep), and the
#                        libraries it loads. Without it `nsys profile` stops after capturing
#                        ("could not make a report"): the target package alone is not enough.
#   bin/nsys                runs nsys, after unpacking the archive into
#                           ${TUTORIAL_NSYS_UNPACK:-${TMPDIR:-/tmp}/tutorial-nsys-2022.4.2.1}.
# Why an archive: unpacked, the two halves are about 120 MB, over the 64 MiB that may be
# carried to the GPU machine; packed with xz they are about 26 MB.
#
# What is left out (unpacked size), none of it used by `nsys profile -t cuda,nvtx`/`nsys stats`:
#   - the GUI itself (nsys-ui, Qt, WebEngine, ~350 MB): host-linux-x64 keeps only
#     QdstrmImporter and the libraries it links (found from its ELF NEEDED entries);
#   - CUPTI 10.0 to 11.7 (70 MB): nsys 2022.4 loads the newest, 11.8, for CUDA 11.8 and later;
#   - libnvperf_host.so (26 MB): GPU metrics sampling (--gpu-metrics-device);
#   - the cuBLAS, cuDNN, MPI, OpenSHMEM and UCX injection libraries, CollectX (network
#     counters), Vulkan layers, NVTX headers, docs: other tracers than cuda and nvtx.
# Libraries added, because a minimal image may lack them: libssh and libpfm (QdstrmImporter
# links them) and theirs, krb5 and OpenSSL's libcrypto, all from Debian 12, beside
# QdstrmImporter, whose RPATH ($ORIGIN) finds them first. The package's own dependencies
# libucx0 and libibumad3 are for the UCX/InfiniBand tracers left out above, so not fetched.
#
# Two fixes: `nsys profile --stats=true` runs the report scripts with /usr/bin/python3, whose
# SQLite has no median() or stdev() (`nsys stats` runs them in nsys's own Python, which
# has both): the reports then fail with "no such function: median". The script adds both
# aggregates to the reports' nsysstats.py where SQLite lacks them, so both commands print
# the same tables; and it runs them with the python3 on PATH, not /usr/bin/python3.
#
# Needs: apt-get, dpkg, xz, python3 (Debian 12 or a relative); no root: apt runs with its
# own lists in a temporary folder and leaves the system's sources and lists alone.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dest=$root/.nsys
version=2022.4.2.1
archive=nsys-$version.tar.xz
extra_libraries=(libssh-4 libpfm4 libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0
                 libcom-err2 libkeyutils1 libssl3)

for tool in apt-get dpkg xz python3 readelf; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "fetch-nsys: $tool not found: run this on Debian 12 (bookworm) or a relative of it." >&2
    exit 1
  fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Debian 12's main and non-free components on the mirror this machine already uses.
mirror=http://deb.debian.org/debian
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
fi
printf 'deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s bookworm main non-free\n' \
  "$mirror" >"$work/sources.list"
mkdir -p "$work/lists/partial" "$work/debs"
apt=(apt-get -qq -o Dir::Etc::SourceList="$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
     -o Dir::State::Lists="$work/lists" -o APT::Architecture=amd64 -o APT::Architectures=amd64
     -o Debug::NoLocking=true -o APT::Sandbox::User=root)
echo "fetch-nsys: package lists from $mirror (bookworm main non-free)"
"${apt[@]}" update
echo "fetch-nsys: downloading nsight-systems-target, nsight-systems (171 MB) and ${#extra_libraries[@]} libraries"
(cd "$work/debs" && "${apt[@]}" download "nsight-systems-target=$version*" "nsight-systems=$version*" \
   "${extra_libraries[@]}")

# Unpack each package into its own tree; take from them only what nsys needs.
for deb in "$work"/debs/*.deb; do
  dpkg -x "$deb" "$work/unpacked"
done
from_target=$work/unpacked/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64
from_host=$work/unpacked/usr/lib/nsight-systems/host-linux-x64
pack=$work/pack
mkdir -p "$pack/host-linux-x64"

cp -a "$from_target" "$pack/target-linux-x64"
(cd "$pack/target-linux-x64" &&
  rm -rf CollectX nvtx NvTraceFormat vulkan-layers libnvperf_host.so \
         libcupti.so.10.* libcupti.so.11.[0-7] libToolsInjectionCuBLAS64_* libToolsInjectionCuDNN64_* \
         libToolsInjectionMPICH64.so libToolsInjectionOpenMPI64.so libToolsInjectionOpenSHMEM64.so \
         libToolsInjectionUCP64.so)

# QdstrmImporter and, transitively, every library of the GUI package it links.
todo=(QdstrmImporter)
while [ ${#todo[@]} -gt 0 ]; do
  file=${todo[0]}
  todo=("${todo[@]:1}")
  [ -e "$pack/host-linux-x64/$file" ] && continue
  cp -L "$from_host/$file" "$pack/host-linux-x64/$file"
  for needed in $(readelf -d "$from_host/$file" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p'); do
    if [ -e "$from_host/$needed" ] && [ ! -e "$pack/host-linux-x64/$needed" ]; then
      todo+=("$needed")
    fi
  done
done
# The system libraries QdstrmImporter links that a minimal image may lack. The GUI package
# links libssh.so to the system's libssh.so.4, so that link is replaced by the library.
rm -f "$pack/host-linux-x64/libssh.so"
library() {  # library <file name>: its path in the unpacked packages (/usr/lib or /lib)
  find "$work/unpacked/usr/lib/x86_64-linux-gnu" "$work/unpacked/lib/x86_64-linux-gnu" \
    -maxdepth 1 -name "$1" 2>/dev/null | head -n 1
}
cp -L "$(library libssh.so.4)" "$pack/host-linux-x64/libssh.so"
for name in libpfm.so.4 libgssapi_krb5.so.2 libkrb5.so.3 libk5crypto.so.3 libkrb5support.so.0 \
            libcom_err.so.2 libkeyutils.so.1 libcrypto.so.3; do
  cp -L "$(library "$name")" "$pack/host-linux-x64/$name"
done
cp "$work/unpacked/usr/share/doc/nsight-systems-target/copyright" "$pack/COPYRIGHT-nsight-systems"

# median() and stdev() for the reports (see the top of this file).
python3 - "$pack/target-linux-x64/python/lib/nsysstats.py" <<'PATCH'
import sys
path = sys.argv[1]
text = open(path).read()
anchor = "        self._dbcon.create_aggregate('unique_duration', 2, self.SQLiteAggregateUniqueDuration)\n"
addition = '''
        # Added by the course's scripts/fetch-nsys.sh: `nsys profile --stats=true` runs this
        # under /usr/bin/python3, whose SQLite has neither median() nor stdev(); nsys's own
        # Python has both. stdev of a single value is 0, as nsys prints it.
        import statistics
        for name, function in (('median', statistics.median),
                               ('stdev', lambda v: statistics.stdev(v) if len(v) > 1 else 0.0)):
            try:
                self._dbcon.execute('SELECT %s(1)' % name)
            except sqlite3.OperationalError:
                self._dbcon.create_aggregate(name, 1, self.sqlite_aggregate(function))

    @staticmethod
    def sqlite_aggregate(function):
        """An SQLite aggregate that applies function to a column's non-NULL values (NULL if none)."""
        class Aggregate:
            def __init__(self):
                self.values = []

            def step(self, value):
                if value is not None:
                    self.values.append(value)

            def finalize(self):
                return function(self.values) if self.values else None
        return Aggregate
'''
if anchor not in text:
    sys.exit("fetch-nsys: nsysstats.py changed: cannot add median() and stdev()")
# The loop goes at the end of __init__, the helper after it.
head, tail = text.split(anchor, 1)
end = tail.index("\n    def __del__(self):")
patched = head + anchor + tail[:end] + "\n" + addition.rstrip("\n") + "\n" + tail[end:]
open(path, "w").write(patched)
PATCH

# Debian pointed the reports' first line at /usr/bin/python3; a machine may have its python3
# elsewhere (the GPU machine's is a virtual environment's): take python3 from PATH.
sed -i '1s|^#!/usr/bin/python3$|#!/usr/bin/env python3|' "$pack"/target-linux-x64/reports/*.py \
  "$pack"/target-linux-x64/rules/*.py

rm -rf "$dest"
mkdir -p "$dest/bin"
echo "fetch-nsys: packing $(du -sh "$pack" | cut -f1) into $archive (xz, a minute or two)"
tar -C "$pack" -cf - . | xz -T0 -6 >"$dest/$archive"

cat >"$dest/bin/nsys" <<WRAPPER
#!/usr/bin/env bash
# Made by scripts/fetch-nsys.sh: nsys $version from Debian 12, packed in ../$archive.
# Unpacks it once (a few seconds) into TUTORIAL_NSYS_UNPACK, then runs nsys from there.
set -u
here=\$(cd "\$(dirname "\${BASH_SOURCE[0]}")/.." && pwd)
unpacked=\${TUTORIAL_NSYS_UNPACK:-\${TMPDIR:-/tmp}/tutorial-nsys-$version}
if [ ! -f "\$unpacked/.complete" ]; then
  mkdir -p "\$(dirname "\$unpacked")"
  partial=\$(mktemp -d "\$unpacked.partial.XXXXXX") || exit 1
  if ! xz -dc "\$here/$archive" | tar -C "\$partial" -xf -; then
    echo "nsys (fetch-nsys.sh): cannot unpack \$here/$archive into \$partial" >&2
    rm -rf "\$partial"
    exit 1
  fi
  touch "\$partial/.complete"
  # Another process may have won the race: then keep its copy.
  mv -T "\$partial" "\$unpacked" 2>/dev/null || rm -rf "\$partial"
fi
exec "\$unpacked/target-linux-x64/nsys" "\$@"
WRAPPER
chmod +x "$dest/bin/nsys"
rm -rf "${TMPDIR:-/tmp}/tutorial-nsys-$version"  # a copy of an earlier fetch
echo "fetch-nsys: $("$dest/bin/nsys" --version 2>&1 | head -n 1)"
echo "fetch-nsys: .nsys/ is $(du -sh "$dest" | cut -f1): $dest/bin/nsys"
